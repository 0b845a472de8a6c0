// --algo_cache PATH for the tools: the process-wide AlgorithmRegistry
// (runtime/device/algorithm_registry.h) loaded from PATH at start when the file exists and saved to
// it at exit, so a second run makes no algorithm searches and chooses what the first chose.
//
//   AlgorithmCache cache(FLAGS_algo_cache);   // loads; throws braid::Error for a malformed file
//   ... run nets ...
//   cache.Save();                              // throws braid::Error when the file cannot be written
//   std::cout << cache.SummaryLine() << "\n";  // "algorithm searches: 0 (12 keys loaded from PATH)"
//
// An empty path does nothing (Save too), and the summary line then reads "algorithm searches: N".
// Not thread-safe: one object per tool run, used from its main thread.
#ifndef BRAID_TOOLS_ALGORITHM_CACHE_H_
#define BRAID_TOOLS_ALGORITHM_CACHE_H_

#include <cstdint>
#include <string>

namespace braid {

class AlgorithmCache {
 public:
  explicit AlgorithmCache(std::string path);
  void Save() const;
  // "algorithm searches: N (M keys loaded from PATH)".
  std::string SummaryLine() const;
  int64_t loaded() const { return loaded_; }

 private:
  std::string path_;
  int64_t loaded_ = 0;
};

}  // namespace braid

#endif  // BRAID_TOOLS_ALGORITHM_CACHE_H_
