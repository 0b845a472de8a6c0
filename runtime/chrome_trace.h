// ChromeTraceWriter: an observer that writes op events as Chrome-trace JSON (loads in Perfetto and
// chrome://tracing), one complete event per op run, one track per thread.
//
//   ChromeTraceWriter trace;
//   net->AddObserver(&trace);
//   for (int i = 0; i < 10; ++i) net->Run();
//   trace.WriteFile("run.json");       // throws braid::Error if the file cannot be written
//
// Thread safety: it locks itself, so one writer may watch several nets at once.
#ifndef BRAID_RUNTIME_CHROME_TRACE_H_
#define BRAID_RUNTIME_CHROME_TRACE_H_

#include <mutex>
#include <string>
#include <vector>

#include "runtime/observer.h"

namespace braid {

class ChromeTraceWriter final : public NetObserver {
 public:
  // Records the first max_runs runs it observes (every run when negative).
  explicit ChromeTraceWriter(int max_runs = -1) : max_runs_(max_runs) {}
  void OnRunEnd(const Net& net, const std::vector<OpEvent>& events) override;
  // {"traceEvents": [...]} with one complete ("X") event per op run; pid 0, tid = thread index.
  std::string Json() const;
  void WriteFile(const std::string& path) const;

 private:
  struct Entry {
    std::string name, category;
    int64_t start_ns, end_ns;
    int thread, run;
  };
  const int max_runs_;
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // guarded by mu_
  int runs_ = 0;                // guarded by mu_
};

}  // namespace braid

#endif  // BRAID_RUNTIME_CHROME_TRACE_H_
