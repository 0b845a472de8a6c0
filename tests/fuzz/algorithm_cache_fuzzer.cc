// Algorithm-cache files (AlgorithmRegistry::Load). An accepted file survives a round trip: saving
// the registry and loading that gives the same entries, and Load counted each of them.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/net_checks.h"
#include "fuzz/refusal.h"
#include "fuzz/temp_folder.h"
#include "runtime/device/algorithm_registry.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  braid::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = braid::fuzz::WriteTemp(
      "algorithms.txt", std::string(reinterpret_cast<const char*>(data), size));
  braid::AlgorithmRegistry registry(braid::SearchMode::kRule);
  int64_t loaded = -1;
  if (braid::fuzz::Refused(registry.Load(path, &loaded))) return 0;
  const std::string saved = braid::fuzz::TempPath("algorithms_saved.txt");
  braid::AlgorithmRegistry again(braid::SearchMode::kRule);
  const braid::Status status = registry.Save(saved);
  const braid::Status reloaded = status.ok() ? again.Load(saved) : status;
  if (!reloaded.ok() || again.Entries() != registry.Entries() ||
      loaded != static_cast<int64_t>(registry.Entries().size())) {
    std::fprintf(stderr, "an accepted algorithm cache does not round-trip: %s\n",
                 reloaded.ToString().c_str());
    std::abort();
  }
  return 0;
}
