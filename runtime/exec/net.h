// Net: a built, validated net that can be run many times.
//
// BuildNet validates every op against its schema (type, arity, in-place rules, that its device has
// a kernel, that each input exists in the workspace, is a declared external_input or is produced by
// an earlier op), creates the blobs of declared external inputs, creates the ops and picks the
// executor named by NetDef.type:
//   "simple" (or empty): ops run in listed order on the calling thread  (runtime/exec/simple_net.h)
//   "dag":               ops run in parallel on a oneTBB flow graph   (runtime/exec/dag_net.h)
// Invalid input throws braid::Error whose message names the net, the op (index, type, name) and
// the blob. Run refuses to start while a declared external input holds no data, unless no op
// touches it and it is no external output.
//
//   std::unique_ptr<Net> net = BuildNet(def, &ws);
//   Status s = net->Run();   // "Internal: net 'n' op #4 (FC 'fc1'): ..." if an op fails
//
// Stopping early: Run(stop) checks `stop` (runtime/exec/run_stop.h) before each op it runs or
// launches, in either executor; once its deadline passes or its token is stopped no further op
// starts, the ops running finish, and the Run returns DeadlineExceeded or Cancelled naming the op
// it stopped before (the net stays runnable, as after a failed op).
//
// Thread safety: Run may be called from any thread, one call at a time per net; a Run that starts
// while another is in flight returns FailedPrecondition without running anything. Run never
// throws: an op's error, or an exception from a launch, the scratch areas or an observer, is the
// Run's Status, and the net stays runnable; after a device stream that failed to drain (its
// kernels may still be running) later Runs are refused, saying why. Different nets
// may run concurrently if they write disjoint blobs. AddObserver must not overlap a Run.
//
// Across processes: with a process group set (runtime/dist/process_group.h), a net with
// cross-process collectives first compares their order with every rank's
// (CheckProcessCollectiveOrder, runtime/exec/process_collective_order.h), once per group; that may
// wait up to the group's timeout for the other ranks to run the net too.
//
// Scratch: the net owns one scratch area per worker (runtime/exec/scratch.h), installed on the
// thread that runs the worker's ops, and grows them all alike after every Run, so that from the
// second Run on (same shapes) no op allocates scratch memory, whichever worker runs it.
//
// Devices: ops on an asynchronous device (sim, cuda) are launched on its streams rather than run
// (runtime/exec/launch_plan.h); Run returns once every stream the net used has drained, with the
// first error raised by any op or kernel. A net with host ops only pays nothing for this.
//
// Intra-op threads: each op runs with the OpenMP team runtime/exec/intra_op_threads.h budgets for
// it, and, in a net that may run ops side by side, holds that many core tokens while it runs. Run
// restores the calling thread's own setting.
#ifndef BRAID_RUNTIME_EXEC_NET_H_
#define BRAID_RUNTIME_EXEC_NET_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "braid/status.h"
#include "planner/dataflow.h"
#include "proto/braid.pb.h"
#include "runtime/core/operator.h"
#include "runtime/exec/intra_op_threads.h"
#include "runtime/exec/launch_plan.h"
#include "runtime/exec/observer.h"
#include "runtime/exec/run_stop.h"
#include "runtime/exec/scratch.h"

namespace braid {

class Workspace;

class Net {
 public:
  virtual ~Net() = default;
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  Status Run() { return Run(RunStop{}); }
  Status Run(const RunStop& stop);

  const NetDef& def() const { return def_; }
  const std::string& name() const { return def_.name(); }
  int num_ops() const { return static_cast<int>(ops_.size()); }
  OperatorBase& op(int i) { return *ops_.at(i); }
  // Completed Run calls (successful or not).
  int64_t run_count() const { return run_count_.load(); }
  // Not owned; must outlive the net or be removed by destroying the net.
  void AddObserver(NetObserver* observer);
  // "net 'name' op #i (Type 'op_name')": how every error names an op.
  std::string OpLabel(int i) const;
  // Bytes of the workers' scratch areas (ops' temporary buffers).
  size_t scratch_bytes() const { return scratch_.bytes(); }
  // The OpenMP threads op i runs with (runtime/exec/intra_op_threads.h).
  int intra_op_threads(int i) const { return intra_op_threads_.at(i); }

 protected:
  // def must already be validated; creates the ops. `workers`: how many threads may run the
  // net's ops at once (one scratch area each).
  Net(const NetDef& def, Workspace* ws, int workers);
  // Runs (or launches) all ops once, reporting failures with RecordError; first_run is true until
  // a Run's ops have all succeeded (a failed first Run may have left allocations lazy: its retry
  // is a first Run too). What it throws fails the Run (Run catches it).
  virtual void RunOps(bool first_run) = 0;
  // Executors call this once, when built: `workers` threads may run host ops at once, and op i,
  // when on a device, runs on stream stream_of[i] of it (runtime/exec/launch_plan.h). It sets each
  // op's intra-op threads and whether ops hold core tokens, and returns how many ops may run beside
  // another (runtime/exec/intra_op_threads.h OpsAtOnce > 1).
  int PlanExecution(const DataflowGraph& g, const std::vector<int>& stream_of, int workers);
  // Runs a host op or launches a device op (RunOp when the net has no device ops). Never throws:
  // what a launch or a host wait throws is the op's error.
  Status RunOrLaunch(OperatorBase& op) {
    return launches_ == nullptr ? RunOp(op) : LaunchOp(op);
  }
  // The run's first failure wins; failed() turns true with it. Safe from any thread (kernels on
  // device streams report theirs here).
  void RecordError(Status status);
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // Whether op i must not start: the run failed, or its RunStop fired (recorded as the run's
  // error, naming op i). Executors call it before each op; safe from any thread.
  bool StopBeforeOp(int i) {
    if (failed()) return true;
    return stop_ != nullptr && StopFired(i);
  }
  // Runs one of this net's ops, recording its event when observed; turns an exception into a
  // Status naming the op. Safe to call concurrently for different ops. Unobserved, it costs one
  // virtual call.
  Status RunOp(OperatorBase& op) {
    const int i = op.net_position();
    SetIntraOpThreads(intra_op_threads_[i]);
    if (gated_[i]) return RunGatedOp(op);
    if (!observers_.empty()) return RunObservedOp(op);
    try {
      op.Run();
      return Status::OK();
    } catch (...) {
      return CurrentOpError(i);
    }
  }
  // Inside a catch block only: the in-flight exception thrown by op i as a Status naming the op.
  Status CurrentOpError(int i) const;
  // Runs (or launches) every op in listed order on the calling thread; stops at the first failure.
  void RunInListedOrder();
  // Worker `i`'s scratch area (0 <= i < workers), for a ScratchScope on the thread running it.
  ScratchArea& scratch_area(int i);

 private:
  friend class LaunchPlan;  // runs kernels with RunOp, fills events_ of launched ops

  // Run's body once it owns the net: every step, whatever fails; the Run's first error.
  Status RunOnce();
  Status RunObservedOp(OperatorBase& op);
  // RunOp holding the op's core tokens; once it has them, it checks StopBeforeOp again.
  Status RunGatedOp(OperatorBase& op);
  Status LaunchOp(OperatorBase& op);    // launches_->RunOrLaunch, its exceptions as the op's error
  Status CheckExternalInputsFed() const;
  bool StopFired(int i);  // StopBeforeOp's check of stop_

  NetDef def_;
  std::vector<std::unique_ptr<OperatorBase>> ops_;
  std::vector<std::pair<std::string, const Tensor*>> external_inputs_;  // those that need data
  std::vector<NetObserver*> observers_;
  std::vector<OpEvent> events_;  // slot i is written only by RunOp of op i during a Run
  ScratchAreas scratch_;         // area i is used only by the thread of worker i
  std::unique_ptr<LaunchPlan> launches_;  // null without device ops; built with the executor
  std::vector<int> intra_op_threads_;     // per op; set with the executor
  std::vector<char> gated_;               // per op: whether it holds core tokens
  std::atomic<bool> failed_{false};
  std::mutex error_mu_;
  Status first_error_;  // guarded by error_mu_
  std::atomic<bool> running_{false};
  std::atomic<int64_t> run_count_{0};
  // The running Run's stop, when it can fire (else null): written by the Run that owns running_
  // before its ops start, read by the threads running them.
  const RunStop* stop_ = nullptr;
  // Read and written only by the Run that owns running_:
  bool ops_succeeded_once_ = false;  // a Run's ops and kernels all succeeded
  Status undrained_;                 // why a stream failed to drain (later Runs are refused)
  // The process group CheckProcessCollectiveOrder last gave a lasting answer for (0: none), and
  // that answer (later Runs in that group return it).
  uint64_t collective_order_group_ = 0;
  Status collective_order_;
};

// Validates def against the op schemas and workspace and builds the executor it names.
// Throws braid::Error on invalid input.
std::unique_ptr<Net> BuildNet(const NetDef& def, Workspace* ws);

// The external inputs of `def` that need data to run, in its order: those an op touches (reads,
// control-reads or writes: Iter reads the counter it writes) or that are external outputs. One no
// op touches (the zoo ResNet-50's input queue) needs none, as in Caffe2.
std::vector<std::string> ExternalInputsNeedingData(const NetDef& def);

// Worker threads for a net: its "num_workers" argument, else the deprecated num_workers field, else
// the machine's hardware threads.
int NumWorkers(const NetDef& def);

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_NET_H_
