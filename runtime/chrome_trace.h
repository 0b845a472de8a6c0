// Observers that turn op events into something to read: a Chrome-trace JSON file (loads in
// Perfetto and chrome://tracing) and a per-op-type time table.
//
//   ChromeTraceWriter trace;
//   OpTypeProfile profile;
//   net->AddObserver(&trace);
//   net->AddObserver(&profile);
//   for (int i = 0; i < 10; ++i) net->Run();
//   trace.WriteFile("run.json");       // throws braid::Error if the file cannot be written
//   std::cout << profile.Table();
//
// Thread safety: each observer locks itself, so one may watch several nets at once.
#ifndef BRAID_RUNTIME_CHROME_TRACE_H_
#define BRAID_RUNTIME_CHROME_TRACE_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/observer.h"

namespace braid {

class ChromeTraceWriter final : public NetObserver {
 public:
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
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // guarded by mu_
  int runs_ = 0;                // guarded by mu_
};

class OpTypeProfile final : public NetObserver {
 public:
  void OnRunEnd(const Net& net, const std::vector<OpEvent>& events) override;
  // Columns: op type, count, total ms, mean us, share of all op time; sorted by total time.
  std::string Table() const;

 private:
  struct Totals {
    int64_t count = 0;
    int64_t total_ns = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Totals> by_type_;  // guarded by mu_
};

}  // namespace braid

#endif  // BRAID_RUNTIME_CHROME_TRACE_H_
