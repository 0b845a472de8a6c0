// Observing net runs: per-op start/end times and threads.
//
// A NetObserver attached to a Net gets, after every Run, one OpEvent per op in op-index order, and
// may act just before each op starts (OnOpStart). Events are recorded only while a net has
// observers, so unobserved nets pay nothing.
//
//   ChromeTraceWriter trace;          // runtime/exec/chrome_trace.h
//   net->AddObserver(&trace);
//   net->Run();
//   trace.WriteFile("trace.json");
//
// Thread safety: OnRunEnd is called on the thread that called Net::Run, once the run has finished,
// so an observer attached to one net needs no lock. OnOpStart is called on the thread about to run
// the op (for an op on a device stream, the stream's thread, in the stream's order), concurrently
// for ops that run in parallel; it may touch only that op's state. An observer shared by nets that
// run at the same time must lock itself.
#ifndef BRAID_RUNTIME_EXEC_OBSERVER_H_
#define BRAID_RUNTIME_EXEC_OBSERVER_H_

#include <cstdint>
#include <vector>

#include "runtime/core/clock.h"
#include "runtime/core/device.h"
#include "runtime/core/device_context.h"  // WaitSpan

namespace braid {

class Net;

struct OpEvent {
  int64_t start_ns = -1;  // steady clock; -1 when the op did not run (an earlier op failed)
  int64_t end_ns = -1;
  int thread = -1;        // small integer naming the thread that ran the op
  // Ops launched on a device stream (runtime/exec/launch_plan.h): start/end above are the kernel's
  // on the stream's thread; these say which stream, when the executor's thread (launch_thread)
  // launched it, and when the stream waited for other streams before it (-1: no wait).
  Device device;
  int stream = -1;  // -1: a host op
  int launch_thread = -1;
  int64_t launch_start_ns = -1, launch_end_ns = -1;
  WaitSpan wait;
  bool ran() const { return start_ns >= 0; }
  bool launched() const { return stream >= 0; }
};

class NetObserver {
 public:
  virtual ~NetObserver() = default;
  // Op `op` of `net` is about to run.
  virtual void OnOpStart(const Net& /*net*/, int /*op*/) {}
  // events[i] is op i's event of the run that just ended.
  virtual void OnRunEnd(const Net& net, const std::vector<OpEvent>& events) = 0;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_OBSERVER_H_
