#include "runtime/exec/net.h"

#include <glog/logging.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <thread>
#include <utility>

#include "runtime/core/argument.h"
#include "runtime/core/op_label.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/dag_net.h"
#include "runtime/exec/net_args.h"
#include "runtime/exec/net_validation.h"
#include "runtime/exec/process_collective_order.h"
#include "runtime/exec/simple_net.h"

namespace braid {
namespace {

// Ops are separate heap objects: RunInListedOrder fetches the op a few places ahead, as a dag
// chain prefetches its ops (a dag net that runs in listed order lost that; README, "Measurements
// behind the design").
constexpr size_t kPrefetchAhead = 8;

}  // namespace

Net::Net(const NetDef& def, Workspace* ws, int workers) : def_(def), scratch_(workers) {
  for (const std::string& name : def_.external_input()) ws->CreateBlob(name);  // as Caffe2 does
  for (std::string& name : ExternalInputsNeedingData(def_)) {
    const Tensor* blob = ws->GetBlob(name);
    external_inputs_.emplace_back(std::move(name), blob);
  }
  ops_.reserve(def_.op_size());
  for (int i = 0; i < def_.op_size(); ++i) {
    try {
      ops_.push_back(CreateOperator(def_.op(i), ws));
      ops_.back()->set_net_position(i);
    } catch (const Error& e) {
      throw Error(Status(e.status().code(), OpLabel(i) + ": " + e.status().message()));
    } catch (const std::exception& e) {  // a constructor that does not check its input: a bug
      throw Error(Status::Internal(OpLabel(i) + ": " + e.what()));
    }
  }
  events_.resize(ops_.size());
}

std::string Net::OpLabel(int i) const { return OpLabelOf(def_, i); }

void Net::AddObserver(NetObserver* observer) { observers_.push_back(observer); }

Status Net::Run(const RunStop& stop) {
  bool idle = false;
  if (!running_.compare_exchange_strong(idle, true, std::memory_order_acquire)) {
    return Status::FailedPrecondition("net '" + name() +
                                      "' is already running; a net runs one Run at a time");
  }
  struct Release {  // however Run returns
    std::atomic<bool>& running;
    const RunStop*& stop;
    ~Release() {
      stop = nullptr;
      running.store(false, std::memory_order_release);
    }
  } release{running_, stop_};
  stop_ = stop.can_fire() ? &stop : nullptr;
  if (!undrained_.ok()) {
    return Status::FailedPrecondition("net '" + name() + "' cannot run again: a device stream " +
                                      "failed to drain in an earlier Run (" +
                                      undrained_.ToString() + ")");
  }
  Status status = CheckExternalInputsFed();
  ProcessGroup* group = CurrentProcessGroup();
  if (status.ok() && group != nullptr) {
    if (collective_order_group_ != group->id()) {  // before any rank waits in a collective
      status = CheckProcessCollectiveOrder(def_, group);
      // Lists that differ stay different: later Runs in this group say so at once. A lost or
      // slow peer may be retried by the next Run.
      if (status.ok() || status.code() == StatusCode::kFailedPrecondition) {
        collective_order_group_ = group->id();
        collective_order_ = status;
      }
    } else {
      status = collective_order_;
    }
  }
  if (status.ok()) status = RunOnce();
  return status;
}

Status Net::RunOnce() {
  // Whatever throws outside an op (a launch or a host wait, growing the scratch areas, an
  // observer) fails this Run only: every step below still runs, so the net is idle and runnable
  // when Run returns. A stream that cannot drain may still run this Run's kernels: later Runs are
  // refused (undrained_).
  const auto guarded = [this](const auto& step) {
    Status s = StatusFromCall(step);
    if (!s.ok()) RecordError(Status(s.code(), "net '" + name() + "': " + s.message()));
    return s;
  };
  if (!observers_.empty()) std::fill(events_.begin(), events_.end(), OpEvent{});
  failed_.store(false);
  const int own_threads = IntraOpThreads();
  guarded([&] { RunOps(/*first_run=*/!ops_succeeded_once_); });
  SetIntraOpThreads(own_threads);
  if (launches_ != nullptr) undrained_ = guarded([&] { launches_->Finish(); });
  ops_succeeded_once_ |= !failed();  // every op and kernel ran: allocations are no longer lazy
  guarded([&] { scratch_.Equalize(); });
  run_count_.fetch_add(1);
  for (NetObserver* observer : observers_) {
    guarded([&] { observer->OnRunEnd(*this, events_); });
  }
  std::lock_guard<std::mutex> lock(error_mu_);
  return std::exchange(first_error_, Status::OK());
}

Status Net::CheckExternalInputsFed() const {
  for (const auto& [name, tensor] : external_inputs_) {
    if (!tensor->has_storage()) {
      return Status::FailedPrecondition("net '" + this->name() + "': external input '" + name +
                                        "' has no data; feed it before Run");
    }
  }
  return Status::OK();
}

Status Net::RunObservedOp(OperatorBase& op) {
  const int i = op.net_position();
  OpEvent& event = events_[i];  // launch fields, if any, were set by the launching thread
  Status status = StatusFromCall([&] {
    for (NetObserver* observer : observers_) observer->OnOpStart(*this, i);
    event.thread = CurrentThreadIndex();
    event.start_ns = NowNanos();
    op.Run();
  });
  event.end_ns = NowNanos();
  if (!status.ok()) return Status(status.code(), OpLabel(i) + ": " + status.message());
  return status;
}

Status Net::RunGatedOp(OperatorBase& op) {
  CoreTokensHeld held(intra_op_threads_[op.net_position()]);
  // The wait for cores may outlast the Run's deadline or another op's failure: an op that gets
  // them after that does not start (the Run's first error, recorded by StopBeforeOp, stands).
  if (StopBeforeOp(op.net_position())) {
    return Status::Cancelled(OpLabel(op.net_position()) +
                             " did not start: the run ended while it "
                             "waited for cores");
  }
  if (!observers_.empty()) return RunObservedOp(op);
  try {
    op.Run();
    return Status::OK();
  } catch (...) {
    return CurrentOpError(op.net_position());
  }
}

Status Net::LaunchOp(OperatorBase& op) {
  try {
    return launches_->RunOrLaunch(op);
  } catch (...) {
    return CurrentOpError(op.net_position());
  }
}

Status Net::CurrentOpError(int i) const {
  Status cause = StatusFromCall([] { throw; });
  return Status(cause.code(), OpLabel(i) + ": " + cause.message());
}

bool Net::StopFired(int i) {
  if (!stop_->Fired()) return false;
  RecordError(stop_->Why("stopped before " + OpLabel(i)));
  return true;
}

void Net::RunInListedOrder() {
  const size_t n = ops_.size();
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) __builtin_prefetch(ops_[i + kPrefetchAhead].get());
    if (StopBeforeOp(static_cast<int>(i))) return;
    Status s = RunOrLaunch(*ops_[i]);
    if (!s.ok()) {
      RecordError(std::move(s));
      return;
    }
  }
}

void Net::RecordError(Status status) {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (!failed_.exchange(true)) first_error_ = std::move(status);
}

int Net::PlanExecution(const DataflowGraph& g, const std::vector<int>& stream_of, int workers) {
  const bool devices = LaunchPlan::NeedsPlan(def_);
  launches_.reset();
  if (devices) launches_ = std::make_unique<LaunchPlan>(this, g, stream_of);
  // Serial resources: the simple executor's thread (every host op), each device stream.
  std::map<std::tuple<int, int, int>, int> streams;
  std::vector<int> resource_of(num_ops());
  for (int i = 0; i < num_ops(); ++i) {
    const Device& device = ops_[i]->device();
    if (device.is_host()) {
      resource_of[i] = workers == 1 ? 0 : -1;
      continue;
    }
    const auto key = std::make_tuple(static_cast<int>(device.type), device.id, stream_of[i]);
    resource_of[i] = streams.try_emplace(key, static_cast<int>(streams.size()) + 1).first->second;
  }
  const int concurrency = workers + static_cast<int>(streams.size());
  const std::vector<int> at_once = OpsAtOnce(g, resource_of, concurrency);
  intra_op_threads_ = IntraOpBudgets(def_, at_once);
  int beside_another = 0, widest_team = 1;
  for (int i = 0; i < num_ops(); ++i) {
    beside_another += at_once[i] > 1;
    widest_team = std::max(widest_team, intra_op_threads_[i]);
  }
  // Teams can oversubscribe the cores only when a team of several threads may run beside another
  // op, or more ops may run at once than there are cores.
  const bool gate =
      (beside_another > 0 && widest_team > 1) || (concurrency > HardwareThreads() && concurrency > 1);
  gated_.assign(num_ops(), 0);
  for (int i = 0; i < num_ops() && gate; ++i) {
    const OpSchema* schema = FindSchema(ops_[i]->type());
    gated_[i] = !(schema != nullptr && schema->is_collective());
  }
  return beside_another;
}

ScratchArea& Net::scratch_area(int i) {
  // Invariant: worker indices come from the net's own executor, below its worker count.
  CHECK(i >= 0 && i < scratch_.size()) << "worker " << i << " of net '" << name() << "' beyond its "
                                        << scratch_.size() << " scratch areas";
  return scratch_.slot(i);
}

std::vector<std::string> ExternalInputsNeedingData(const NetDef& def) {
  std::set<std::string> touched(def.external_output().begin(), def.external_output().end());
  for (const OperatorDef& op : def.op()) {
    touched.insert(op.input().begin(), op.input().end());
    touched.insert(op.control_input().begin(), op.control_input().end());
    touched.insert(op.output().begin(), op.output().end());
  }
  std::vector<std::string> needed;
  for (const std::string& name : def.external_input()) {
    if (touched.count(name)) needed.push_back(name);
  }
  return needed;
}

int NumWorkers(const NetDef& def) {
  int workers = ArgumentReader(def.arg()).Get<int>(kNumWorkersArg, 0);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (workers <= 0 && def.has_num_workers()) workers = def.num_workers();  // Caffe2's old field
#pragma GCC diagnostic pop
  if (workers <= 0) workers = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(workers, 1);
}

std::unique_ptr<Net> BuildNet(const NetDef& def, Workspace* ws) {
  NetDef net = WithNetDeviceOption(def);
  ValidateNet(net, *ws);
  const std::string& type = net.type();
  if (type.empty() || type == "simple") return std::make_unique<SimpleNet>(net, ws);
  if (type == "dag") {
    OrderProcessCollectives(&net);
    return std::make_unique<DagNet>(net, ws);
  }
  throw Error(Status::InvalidArgument("net '" + net.name() + "': unknown executor type '" + type +
                                      "' (braid has 'simple' and 'dag')"));
}

namespace {

// Workspaces build and run their nets through these (runtime/core/workspace.h).
[[maybe_unused]] const bool kNetHooksInstalled = [] {
  InstallNetHooks({.build = [](const NetDef& def, Workspace* ws) -> std::shared_ptr<Net> {
                     return BuildNet(def, ws);
                   },
                   .run = [](Net& net) { return net.Run(); }});
  return true;
}();

}  // namespace

}  // namespace braid
