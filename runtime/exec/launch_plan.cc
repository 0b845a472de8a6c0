#include "runtime/exec/launch_plan.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <utility>

#include <glog/logging.h>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"
#include "runtime/core/shape_inference.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/device/collective.h"
#include "runtime/device/device_lock.h"
#include "runtime/exec/net.h"

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

// Tells the caching allocator that owns t's block that `stream` uses it
// (runtime/device/caching_allocator.h RecordStream): the block is reused only after that stream's
// work on it.
void RecordUse(const Tensor& t, Stream* stream) {
  const Storage* storage = t.storage().get();
  if (storage == nullptr || storage->is_view() || storage->data() == nullptr) return;
  if (!(t.device() == stream->device())) return;
  if (CachingAllocator* a = CachingAllocatorOf(t.device())) a->RecordStream(storage->data(), stream);
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

  void Execute() override {  // on the stream's thread; must not throw, and RunOp does not
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
  CollectiveOp* collective = nullptr;                    // set when it launches ranks
  std::vector<std::unique_ptr<RankLaunch>> ranks;        // a collective's kernels, by rank
  std::unique_ptr<CollectiveRendezvous> rendezvous;      // where they meet
  std::vector<Event*> stream_waits;  // parents' events its stream waits for
  std::vector<Event*> host_waits;    // host op: its device parents' events
  std::vector<Event*> parent_events;  // every device parent's event

 private:
  bool InputsAsSeen() const;

  std::vector<ShapeInfo> seen_inputs_;  // input shapes of the last inference
  std::vector<ShapeInfo> inferred_;     // its outputs
  bool inferred_once_ = false;
};

// One rank's kernel of a collective launched per device (runtime/device/collective.h).
class LaunchPlan::RankLaunch final : public KernelTask {
 public:
  RankLaunch(LaunchPlan* plan, OpLaunch* op, int rank, Stream* stream)
      : plan_(plan), op_(op), rank_(rank), stream(stream),
        event(GetDeviceContext(stream->device())->CreateEvent(Describe())) {}

  void Execute() override {  // on the rank's stream thread
    if (op_->net_->failed()) {
      op_->rendezvous->Fail(Status::FailedPrecondition(Describe() + ": the run failed before it started"));
      return;
    }
    Status s = plan_->RunRank(*this);
    if (s.ok()) return;
    op_->rendezvous->Fail(s);
    op_->net_->RecordError(std::move(s));
  }
  void Abandon(const Status& why) override {
    Status s(why.code(), Describe() + ": " + why.message());
    op_->rendezvous->Fail(s);
    op_->net_->RecordError(std::move(s));
  }
  std::string Describe() const override {
    return op_->Describe() + ", rank " + std::to_string(rank_) + " on " +
           stream->device().ToString();
  }

  LaunchPlan* const plan_;
  OpLaunch* const op_;
  const int rank_;
  Stream* const stream;
  const std::unique_ptr<Event> event;  // recorded after the kernel
  std::vector<Event*> stream_waits;    // parents' events its stream waits for
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
    try {
      t->ReserveStorage();
    } catch (const Error& e) {  // out of memory: say for which blob
      throw Error(Status(e.status().code(), "output '" + op_->def().output(o) + "' " +
                                                t->ShapeString() + ": " + e.status().message()));
    }
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
    AddRanks(i, stream_of[i]);
    for (const auto& rank : ops_[i]->ranks) used.insert(rank->stream);
  }
  streams_.assign(used.begin(), used.end());
  const std::vector<OpWaits> waits = PlanWaits(g, devices, stream_of);
  for (int i = 0; i < net->num_ops(); ++i) {
    OpLaunch& l = *ops_[i];
    auto add = [&](std::vector<Event*>* events, int p, const Stream* stream) {
      if (Event* e = EventFor(p, stream)) events->push_back(e);
    };
    for (int p : waits[i].on_stream) add(&l.stream_waits, p, l.stream);
    for (int p : waits[i].on_host) add(&l.host_waits, p, nullptr);
    for (int p : waits[i].device_parents) add(&l.parent_events, p, nullptr);
    if (!l.ranks.empty()) PlanRankWaits(i, g, devices);
  }
}

void LaunchPlan::AddRanks(int i, int stream_index) {
  OpLaunch& l = *ops_[i];
  const OpSchema* schema = l.schema_;
  auto* collective = dynamic_cast<CollectiveOp*>(l.op_);
  if (schema == nullptr || !schema->is_collective() || collective == nullptr) return;
  const std::vector<Device> ranks = collective->RankDevices();
  std::set<std::pair<int, int>> distinct;
  for (const Device& d : ranks) {
    if (!IsAsync(d)) return;
    distinct.insert({static_cast<int>(d.type), d.id});
  }
  if (ranks.size() < 2 || distinct.size() != ranks.size()) return;  // one kernel does it all
  l.collective = collective;
  l.rendezvous = std::make_unique<CollectiveRendezvous>(l.Describe(), ranks);
  for (size_t r = 0; r < ranks.size(); ++r) {
    Stream* stream = GetDeviceContext(ranks[r])->stream(stream_index);
    l.ranks.push_back(std::make_unique<RankLaunch>(this, &l, static_cast<int>(r), stream));
  }
}

Event* LaunchPlan::EventFor(int p, const Stream* stream) const {
  const OpLaunch& parent = *ops_[p];
  if (parent.ranks.empty()) return parent.stream == stream ? nullptr : parent.event.get();
  for (const auto& rank : parent.ranks) {
    if (stream != nullptr && rank->stream->device() == stream->device()) {
      return rank->stream == stream ? nullptr : rank->event.get();
    }
  }
  return parent.ranks[0]->event.get();  // done only once every rank has done its share
}

void LaunchPlan::PlanRankWaits(int i, const DataflowGraph& g, const std::vector<Device>& devices) {
  OpLaunch& l = *ops_[i];
  const std::vector<Device>& ranks = l.rendezvous->ranks();
  for (int p : g.parents[i]) {
    if (!IsAsync(devices[p])) continue;  // a host parent has finished before the launch
    if (i == g_drop_child.load() && p == g_drop_parent.load()) continue;
    // Rank r waits for the parents on its device, rank 0 also for those on no rank's device (a
    // rank's peers reach their barrier only after it); every rank waits for a collective parent
    // (EventFor picks that parent's rank on its own device).
    const bool on_a_rank = std::find(ranks.begin(), ranks.end(), devices[p]) != ranks.end();
    const bool collective_parent = !ops_[p]->ranks.empty();
    for (auto& rank : l.ranks) {
      const bool waits = collective_parent || devices[p] == rank->stream->device() ||
                         (!on_a_rank && rank->rank_ == 0);
      if (!waits) continue;
      if (Event* e = EventFor(p, rank->stream)) rank->stream_waits.push_back(e);
    }
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
    AllocationStreamScope allocating_for(l.stream);
    queue = l.PrepareOutputs([&] {
      for (Event* e : l.parent_events) e->HostWait();
    });
    if (l.ranks.empty()) {
      for (int j = 0; j < l.op_->InputSize(); ++j) RecordUse(l.op_->Input(j), l.stream);
    } else {
      // Each input on the stream of the rank on its device (RecordUse skips the others): a rank
      // may read several inputs (ProcessAllreduce's replicas hold several tensors each).
      for (const auto& rank : l.ranks) {
        for (int j = 0; j < l.op_->InputSize(); ++j) RecordUse(l.op_->Input(j), rank->stream);
      }
    }
  });
  if (!prepared.ok()) return Status(prepared.code(), net_->OpLabel(i) + ": " + prepared.message());
  if (!queue) return RunSynchronously(l);
  if (!l.ranks.empty()) {
    Status launched = LaunchRanks(l);
    if (!launched.ok()) {
      return Status(launched.code(), net_->OpLabel(i) + ": " + launched.message());
    }
  } else {
    for (Event* e : l.stream_waits) l.stream->Wait(e, trace != nullptr ? &trace->wait : nullptr);
    l.stream->Launch(&l);
    if (l.event != nullptr) l.stream->Record(l.event.get());
  }
  if (trace != nullptr) trace->launch_end_ns = NowNanos();
  return Status::OK();
}

Status LaunchPlan::LaunchRanks(OpLaunch& l) {
  l.rendezvous->Reset();  // the last run's rank kernels have all run (Finish)
  OpEvent* trace = net_->observers_.empty() ? nullptr : &net_->events_[l.op_->net_position()];
  Status prepared = StatusFromCall([&] { l.collective->PrepareRanks(); });  // before the locks
  if (!prepared.ok()) return prepared;
  DevicesLock group(l.rendezvous->ranks());
  Status began = StatusFromCall([&] { l.collective->BeginRanks(); });
  if (!began.ok()) return began;
  for (const auto& rank : l.ranks) {
    WaitSpan* span = trace != nullptr && rank->rank_ == 0 ? &trace->wait : nullptr;
    for (Event* e : rank->stream_waits) rank->stream->Wait(e, span);
    rank->stream->Launch(rank.get());
  }
  Status ended = StatusFromCall([&] { l.collective->EndRanks(); });
  // Recorded after the group ends: a CUDA group queues its kernels only at ncclGroupEnd.
  for (const auto& rank : l.ranks) rank->stream->Record(rank->event.get());
  return ended;
}

Status LaunchPlan::RunRank(RankLaunch& rank) {
  OpLaunch& l = *rank.op_;
  const int i = l.op_->net_position();
  SetIntraOpThreads(net_->intra_op_threads_[i]);
  OpEvent* event = rank.rank_ == 0 && !net_->observers_.empty() ? &net_->events_[i] : nullptr;
  if (event != nullptr) {
    event->thread = CurrentThreadIndex();
    event->start_ns = NowNanos();
  }
  Status s = StatusFromCall([&] { l.collective->RunRank(rank.rank_, *l.rendezvous); });
  if (event != nullptr) event->end_ns = NowNanos();
  if (s.ok() || s.message().rfind(net_->OpLabel(i), 0) == 0) return s;  // a peer's, labelled
  return Status(s.code(), rank.Describe() + ": " + s.message());
}

Status LaunchPlan::RunSynchronously(OpLaunch& l) {
  for (Event* e : l.parent_events) e->HostWait();
  Status s;
  l.stream->RunHere([&] { s = net_->RunOp(*l.op_); });
  if (l.event != nullptr) l.stream->Record(l.event.get());
  OpEvent* trace = net_->observers_.empty() ? nullptr : &net_->events_[l.op_->net_position()];
  if (trace != nullptr) trace->launch_end_ns = NowNanos();
  return s;
}

void LaunchPlan::Finish() {
  // Every stream drains, whatever another's Synchronize throws: none may still run this Run's
  // kernels when Run returns.
  Status first;
  for (Stream* s : streams_) {
    Status drained = StatusFromCall([&] { s->Synchronize(); });
    if (first.ok()) first = std::move(drained);
  }
  if (!first.ok()) throw Error(first);
}

}  // namespace braid
