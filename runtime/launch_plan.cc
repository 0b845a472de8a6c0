#include "runtime/launch_plan.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <utility>

#include <glog/logging.h>

#include "runtime/net.h"
#include "runtime/op_schema.h"
#include "runtime/operator.h"
#include "runtime/shape_inference.h"

namespace braid {
namespace {

std::atomic<int> g_drop_child{-1};
std::atomic<int> g_drop_parent{-1};

bool IsAsync(const Device& device) { return !device.is_host(); }

std::vector<Device> OpDevices(const NetDef& def) {
  std::vector<Device> devices;
  for (const OperatorDef& op : def.op()) devices.push_back(DeviceFromProto(op.device_option()));
  return devices;
}

}  // namespace

std::vector<OpWaits> PlanWaits(const DataflowGraph& g, const std::vector<Device>& devices,
                               const std::vector<int>& stream_of) {
  std::vector<OpWaits> waits(g.num_ops());
  for (int child = 0; child < g.num_ops(); ++child) {
    for (int parent : g.parents[child]) {
      if (!IsAsync(devices[parent])) continue;  // a host parent has finished before the launch
      if (child == g_drop_child.load() && parent == g_drop_parent.load()) continue;
      OpWaits& w = waits[child];
      w.device_parents.push_back(parent);
      if (!IsAsync(devices[child])) {
        w.on_host.push_back(parent);
      } else if (!(devices[parent] == devices[child]) || stream_of[parent] != stream_of[child]) {
        w.on_stream.push_back(parent);
      }
    }
  }
  return waits;
}

// One op's launch state. For a device op it is also the task its stream runs.
class LaunchPlan::OpLaunch final : public KernelTask {
 public:
  OpLaunch(Net* net, OperatorBase* op) : net_(net), op_(op), schema_(FindSchema(op->type())) {}

  void Execute() override {  // on the stream's thread
    if (net_->failed()) return;  // a kernel of a failed run does not run
    Status s = net_->RunOp(*op_);
    if (!s.ok()) net_->RecordError(std::move(s));
  }
  void Abandon(const Status& why) override {
    net_->RecordError(Status(why.code(), Describe() + ": " + why.message()));
  }
  std::string Describe() const override { return net_->OpLabel(op_->net_position()); }

  // Sizes the op's outputs from its shape inference, on the host (see launch_plan.h). Returns
  // false when the kernel must run synchronously. `wait_parents` is called before any change.
  template <typename WaitParents>
  bool PrepareOutputs(WaitParents&& wait_parents);

  Net* const net_;
  OperatorBase* const op_;
  const OpSchema* const schema_;
  Stream* stream = nullptr;          // null for host ops
  std::unique_ptr<Event> event;      // recorded after the kernel when the op has children
  std::vector<Event*> stream_waits;  // parents' events its stream waits for
  std::vector<Event*> host_waits;    // host op: its device parents' events
  std::vector<Event*> parent_events;  // every device parent's event

 private:
  bool InputsAsSeen() const;

  std::vector<ShapeInfo> seen_inputs_;  // input shapes of the last inference
  std::vector<ShapeInfo> inferred_;     // its outputs
  bool inferred_once_ = false;
};

bool LaunchPlan::OpLaunch::InputsAsSeen() const {
  if (!inferred_once_) return false;
  for (int j = 0; j < op_->InputSize(); ++j) {
    const Tensor& t = op_->Input(j);
    const ShapeInfo& seen = seen_inputs_[j];
    if (seen.known != t.has_storage() || seen.dtype != t.dtype() || seen.dims != t.shape()) {
      return false;
    }
  }
  return true;
}

template <typename WaitParents>
bool LaunchPlan::OpLaunch::PrepareOutputs(WaitParents&& wait_parents) {
  if (schema_ == nullptr || !schema_->has_shape_inference()) return true;  // it writes none
  if (!InputsAsSeen()) {
    seen_inputs_.clear();
    for (int j = 0; j < op_->InputSize(); ++j) seen_inputs_.push_back(ShapeOf(op_->Input(j)));
    inferred_ = schema_->InferShapes(op_->def(), seen_inputs_);
    inferred_once_ = true;
  }
  bool changes = false, in_use = false;
  for (int o = 0; o < op_->OutputSize(); ++o) {
    const ShapeInfo& info = inferred_[o];
    if (!info.known) return false;  // the kernel decides its sizes itself
    const Tensor* t = op_->Output(o);
    const bool same = t->dtype() == info.dtype && t->shape() == info.dims && t->has_storage() &&
                      t->capacity() >= std::max<size_t>(info.nbytes(), 1);
    if (same) continue;
    for (int j = 0; j < op_->InputSize(); ++j) {
      if (&op_->Input(j) == t) return false;  // in place: the kernel reads the old shape
    }
    changes = true;
    in_use = in_use || t->has_storage();  // queued kernels may still use what it holds
  }
  if (!changes) return true;
  if (in_use) wait_parents();
  for (int o = 0; o < op_->OutputSize(); ++o) {
    Tensor* t = op_->Output(o);
    t->Resize(inferred_[o].dtype, inferred_[o].dims);
    t->ReserveStorage();
  }
  return true;
}

LaunchPlan::LaunchPlan(Net* net, const DataflowGraph& g, const std::vector<int>& stream_of)
    : net_(net) {
  const std::vector<Device> devices = OpDevices(net->def());
  std::set<Stream*> used;
  for (int i = 0; i < net->num_ops(); ++i) {
    ops_.push_back(std::make_unique<OpLaunch>(net, &net->op(i)));
    if (!IsAsync(devices[i])) continue;
    ops_[i]->stream = GetDeviceContext(devices[i])->stream(stream_of[i]);
    used.insert(ops_[i]->stream);
    if (!g.children[i].empty()) {
      ops_[i]->event = GetDeviceContext(devices[i])->CreateEvent(net->OpLabel(i));
    }
  }
  streams_.assign(used.begin(), used.end());
  const std::vector<OpWaits> waits = PlanWaits(g, devices, stream_of);
  for (int i = 0; i < net->num_ops(); ++i) {
    OpLaunch& l = *ops_[i];
    for (int p : waits[i].on_stream) l.stream_waits.push_back(ops_[p]->event.get());
    for (int p : waits[i].on_host) l.host_waits.push_back(ops_[p]->event.get());
    for (int p : waits[i].device_parents) l.parent_events.push_back(ops_[p]->event.get());
  }
}

LaunchPlan::~LaunchPlan() = default;

bool LaunchPlan::NeedsPlan(const NetDef& def) {
  for (const Device& device : OpDevices(def)) {
    if (IsAsync(device)) return true;
  }
  return false;
}

void LaunchPlan::DropWaitForTesting(int child, int parent) {
  g_drop_child.store(child);
  g_drop_parent.store(parent);
}

Status LaunchPlan::RunOrLaunch(OperatorBase& op) {
  OpLaunch& l = *ops_[op.net_position()];
  if (l.stream != nullptr) return Launch(l);
  for (Event* e : l.host_waits) e->HostWait();
  return net_->RunOp(op);
}

Status LaunchPlan::Launch(OpLaunch& l) {
  const int i = l.op_->net_position();
  OpEvent* trace = net_->observers_.empty() ? nullptr : &net_->events_[i];
  if (trace != nullptr) {
    trace->device = l.op_->device();
    trace->stream = l.stream->index();
    trace->launch_thread = CurrentThreadIndex();
    trace->launch_start_ns = NowNanos();
  }
  bool queue = true;
  Status prepared = StatusFromCall([&] {
    queue = l.PrepareOutputs([&] {
      for (Event* e : l.parent_events) e->HostWait();
    });
  });
  if (!prepared.ok()) return Status(prepared.code(), net_->OpLabel(i) + ": " + prepared.message());
  if (!queue) return RunSynchronously(l);
  for (Event* e : l.stream_waits) l.stream->Wait(e, trace != nullptr ? &trace->wait : nullptr);
  l.stream->Launch(&l);
  if (l.event != nullptr) l.stream->Record(l.event.get());
  if (trace != nullptr) trace->launch_end_ns = NowNanos();
  return Status::OK();
}

Status LaunchPlan::RunSynchronously(OpLaunch& l) {
  for (Event* e : l.parent_events) e->HostWait();
  Status s;
  {
    CurrentDeviceScope on_device(l.op_->device());
    s = net_->RunOp(*l.op_);
  }
  if (l.event != nullptr) l.stream->Record(l.event.get());
  OpEvent* trace = net_->observers_.empty() ? nullptr : &net_->events_[l.op_->net_position()];
  if (trace != nullptr) trace->launch_end_ns = NowNanos();
  return s;
}

void LaunchPlan::Finish() {
  for (Stream* s : streams_) s->Synchronize();
}

}  // namespace braid
