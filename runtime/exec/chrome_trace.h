// ChromeTraceWriter: an observer that writes op events as Chrome-trace JSON (loads in Perfetto and
// chrome://tracing), one complete event per op run. Host ops sit on their thread's track of the
// "host" process. An op launched on a device (runtime/exec/launch_plan.h) shows as a "launch <op>"
// span on the track of the thread that launched it, and as its kernel, preceded by "wait <op>" when
// its stream waited for other streams, on the track "stream N" of the device's process ("sim:0"):
// the overlap of host and streams can be read off the tracks.
//
//   ChromeTraceWriter trace;
//   net->AddObserver(&trace);
//   for (int i = 0; i < 10; ++i) net->Run();
//   trace.WriteFile("run.json");       // throws braid::Error if the file cannot be written
//
// Thread safety: it locks itself, so one writer may watch several nets at once.
#ifndef BRAID_RUNTIME_EXEC_CHROME_TRACE_H_
#define BRAID_RUNTIME_EXEC_CHROME_TRACE_H_

#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/exec/observer.h"

namespace braid {

class ChromeTraceWriter final : public NetObserver {
 public:
  // Records the first max_runs runs it observes (every run when negative).
  explicit ChromeTraceWriter(int max_runs = -1) : max_runs_(max_runs) {}
  void OnRunEnd(const Net& net, const std::vector<OpEvent>& events) override;
  // {"traceEvents": [...]}: complete ("X") events as above, and metadata ("M") events naming the
  // processes and tracks.
  std::string Json() const;
  void WriteFile(const std::string& path) const;

 private:
  struct Entry {
    std::string name, category;
    int64_t start_ns, end_ns;
    int pid, tid, run;
  };
  // The trace process of a device: 0 for the host, 1, 2, ... for devices as first seen.
  int ProcessOf(const Device& device);
  void Add(std::string name, const std::string& category, int64_t start_ns, int64_t end_ns,
           int pid, int tid);

  const int max_runs_;
  mutable std::mutex mu_;
  std::vector<Entry> entries_;          // guarded by mu_
  std::vector<std::string> processes_;  // guarded by mu_: process i's name
  int runs_ = 0;                        // guarded by mu_
};

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_CHROME_TRACE_H_
