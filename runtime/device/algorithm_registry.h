// AlgorithmRegistry: one process-wide choice of algorithm per key, for ops that choose an
// implementation by measuring (Conv between oneDNN's direct and Winograd kernels; cuDNN's find
// later), as MXNet's cuDNN algorithm registry does.
//
// The key is everything that affects the choice, spelled by the op: shapes, strides, pads,
// dilation, groups, the primitive's layouts, data type, direction (forward, backward-data,
// backward-filter), engine and device architecture (oneDNN's CPU ISA; an SM version for CUDA). It
// names no device: every device (cpu:0, sim:1, ...) that asks for a key gets the same answer, so
// the replicas of a data-parallel net run the same algorithms with the same workspace sizes, and
// sim and cpu nets compute the same bits.
//
// The finder is supplied by the op. It lists the candidates its own rule allows, in the rule's
// order of preference, each with the workspace bytes it needs and a callback that runs it and
// returns its time. Candidates needing more than the request's workspace limit are not eligible.
// In SearchMode::kMeasure (the default) the fastest eligible candidate wins (ties: the earlier
// one); a lone eligible candidate is chosen without timing. In SearchMode::kRule nothing is timed
// and the first eligible candidate wins: the op's old deterministic rule, the same in every
// process (BRAID_ALGORITHM_SEARCH=rule in the environment selects it for Global()).
//
// Exactly one search per key in the process: the first asker runs the finder; concurrent askers
// for that key wait for it and get its answer; different keys search concurrently. A failed search
// (the finder threw, or no candidate fits the limit) is reported to the asker and to those
// waiting, and is not remembered: the next asker searches again. The limit is not part of the key:
// the first asker's limit decides, and later askers get the same answer (check
// choice.workspace_bytes against your own limit if you must).
//
// Quiescing allocation: a search runs while the registry holds the search guard of the asking
// device. By default that is a process-wide mutex per device (host devices, cpu:N, share one), so
// searches on one device never overlap (their timings would disturb each other). Ops search from
// their kernel, on the device's stream: no raw allocation or free on that device can run meanwhile,
// since each drains the device first (runtime/core/device_context.h), which is what quiesces
// allocation. That is also why the guard must never be the device's DeviceLock
// (runtime/device/device_lock.h): a raw allocation holds it while it waits for the searching
// kernel. SetSearchGuard replaces the guard (tests); the finder must not allocate through an
// allocator whose lock the guard holds.
//
// Persistence: Save and Load a text file (see algorithm_registry.cc for the format), so a second
// process makes no searches and chooses as the first did. Loaded entries never replace an answer
// already given in this process.
//
// Thread safety: every method may be called from any thread. Global() lives for the process.
//
//   AlgorithmRequest request{"Conv/forward|x=8,16,28,28|...", device, /*workspace_limit=*/-1};
//   AlgorithmChoice choice = AlgorithmRegistry::Global().Choose(request, [&] {
//     return std::vector<AlgorithmCandidate>{
//         {"winograd", winograd_scratch_bytes, [&] { return TimeMs(winograd); }},
//         {"direct", direct_scratch_bytes, [&] { return TimeMs(direct); }}};
//   });
//   // choice.algorithm == "winograd" or "direct", the same on every device and thread.
#ifndef BRAID_RUNTIME_DEVICE_ALGORITHM_REGISTRY_H_
#define BRAID_RUNTIME_DEVICE_ALGORITHM_REGISTRY_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/core/device.h"

namespace braid {

struct AlgorithmChoice {
  std::string algorithm;        // the candidate's name, e.g. "winograd"
  int64_t workspace_bytes = 0;  // what it needs beyond its inputs and outputs
  bool operator==(const AlgorithmChoice&) const = default;
};

struct AlgorithmCandidate {
  std::string algorithm;  // a name without tabs or newlines
  int64_t workspace_bytes = 0;
  // Runs the candidate (a few times, on scratch data) and returns its time in ms, e.g. the median.
  // Called only in SearchMode::kMeasure, for candidates that fit, under the search guard.
  std::function<double()> time_ms;
};

// The candidates the op's rule allows, in its order of preference. May throw braid::Error.
using AlgorithmFinder = std::function<std::vector<AlgorithmCandidate>()>;

struct AlgorithmRequest {
  std::string key;                  // everything that affects the choice; no tabs or newlines
  Device device;                    // the asking device, whose search guard the search holds
  int64_t workspace_limit = -1;     // bytes a candidate may use; -1: unlimited
};

enum class SearchMode { kMeasure, kRule };

// Holds a device's allocation quiesced while it lives (see the header comment).
using SearchGuard = std::function<std::unique_lock<std::mutex>(const Device&)>;

class AlgorithmRegistry {
 public:
  // SearchMode::kRule when the environment has BRAID_ALGORITHM_SEARCH=rule (or 0, off, false).
  static AlgorithmRegistry& Global();

  explicit AlgorithmRegistry(SearchMode mode = SearchMode::kMeasure);
  AlgorithmRegistry(const AlgorithmRegistry&) = delete;
  AlgorithmRegistry& operator=(const AlgorithmRegistry&) = delete;

  // The choice for request.key, searching with `finder` if no one has yet. Throws braid::Error
  // (InvalidArgument for a bad key, ResourceExhausted when no candidate fits the limit, or what
  // the finder threw), naming the key and the device.
  AlgorithmChoice Choose(const AlgorithmRequest& request, const AlgorithmFinder& finder);
  // The choice for `key` if one has been made or loaded.
  std::optional<AlgorithmChoice> Find(const std::string& key) const;
  // Every choice made or loaded, by key.
  std::map<std::string, AlgorithmChoice> Entries() const;

  // Writes every choice to `path` (replacing it). IoError naming the file on failure.
  Status Save(const std::string& path) const;
  // Adds the choices in `path` for keys without one; `*loaded` (optional) gets how many were
  // added. NotFound for a missing file; InvalidArgument naming the file and line for a malformed
  // one, in which case nothing is added.
  Status Load(const std::string& path, int64_t* loaded = nullptr);

  // Finder runs in this process (successful or not); loaded entries are not searches.
  int64_t searches() const;
  SearchMode mode() const;
  void set_mode(SearchMode mode);
  // Replaces the search guard (the default: a process-wide mutex per device, host devices one).
  void SetSearchGuard(SearchGuard guard);
  // Forgets every choice and resets the search count (tests; not while other threads Choose).
  void Clear();

 private:
  struct Entry {
    bool searching = false;  // a search for the key is under way
    std::optional<AlgorithmChoice> choice;
    int64_t failures = 0;  // searches that failed; waiters compare it to learn theirs did
    Status failure;        // the latest failure, for those waiting on that search
  };
  AlgorithmChoice Search(const AlgorithmRequest& request, const AlgorithmFinder& finder,
                         SearchMode mode);
  std::unique_lock<std::mutex> Guard(const Device& device) const;

  mutable std::mutex mu_;
  std::condition_variable search_done_;
  std::map<std::string, Entry> entries_;  // guarded by mu_
  int64_t searches_ = 0;                  // guarded by mu_
  SearchMode mode_;                       // guarded by mu_
  SearchGuard guard_;                     // guarded by mu_; empty: the default per-device mutex
};

// The workspace limit of a search on `device`: what its caching allocator can give without eating
// into the reserve (CachingAllocator::AvailableWithoutReserve) for a device with memory of its own,
// -1 (unlimited) for host devices. Safe to call from a kernel.
int64_t SearchWorkspaceLimit(const Device& device);

// The default search guard's mutex for `device` (host devices share one).
std::mutex& DefaultSearchMutex(const Device& device);

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_ALGORITHM_REGISTRY_H_
