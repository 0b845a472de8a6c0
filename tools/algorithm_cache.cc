#include "tools/algorithm_cache.h"

#include <filesystem>
#include <utility>

#include "braid/status.h"
#include "runtime/device/algorithm_registry.h"

namespace braid {

AlgorithmCache::AlgorithmCache(std::string path) : path_(std::move(path)) {
  if (path_.empty() || !std::filesystem::exists(path_)) return;
  const Status status = AlgorithmRegistry::Global().Load(path_, &loaded_);
  if (!status.ok()) throw Error(status);
}

void AlgorithmCache::Save() const {
  if (path_.empty()) return;
  const Status status = AlgorithmRegistry::Global().Save(path_);
  if (!status.ok()) throw Error(status);
}

std::string AlgorithmCache::SummaryLine() const {
  std::string line =
      "algorithm searches: " + std::to_string(AlgorithmRegistry::Global().searches());
  if (!path_.empty()) {
    line += " (" + std::to_string(loaded_) + " keys loaded from " + path_ + ")";
  }
  return line;
}

}  // namespace braid
