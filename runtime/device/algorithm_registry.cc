#include "runtime/device/algorithm_registry.h"

#include <glog/logging.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "runtime/core/device_context.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/io/atomic_file.h"

namespace braid {
namespace {

// The file format: a version line, then one choice per line, three tab-separated fields. Lines
// starting with '#' are comments.
//
//   braid-algorithm-registry 1
//   Conv/forward|isa=avx512_core|...<TAB>winograd<TAB>1048576
constexpr char kVersionLine[] = "braid-algorithm-registry 1";

SearchMode ModeFromEnvironment() {
  const char* value = std::getenv("BRAID_ALGORITHM_SEARCH");
  if (value == nullptr) return SearchMode::kMeasure;
  const std::string v = value;
  if (v == "rule" || v == "0" || v == "off" || v == "false") return SearchMode::kRule;
  if (v != "measure" && v != "1" && v != "on" && v != "true" && !v.empty()) {
    LOG(WARNING) << "BRAID_ALGORITHM_SEARCH='" << v << "' is neither 'rule' nor 'measure'; measuring";
  }
  return SearchMode::kMeasure;
}

bool HasSeparator(const std::string& text) {
  return text.find_first_of("\t\n\r") != std::string::npos;
}

std::string Where(const AlgorithmRequest& request) {
  return "algorithm key '" + request.key + "' on " + request.device.ToString();
}

// The fastest of `fits` (ties: the earlier), timing each.
const AlgorithmCandidate& PickFastest(const std::vector<const AlgorithmCandidate*>& fits,
                                      const AlgorithmRequest& request) {
  const AlgorithmCandidate* best = fits[0];
  double best_ms = 0;
  std::ostringstream report;
  for (size_t i = 0; i < fits.size(); ++i) {
    if (!fits[i]->time_ms) {
      throw Error(Status::Internal(Where(request) + ": candidate '" + fits[i]->algorithm +
                                   "' has no timing callback"));
    }
    const double ms = fits[i]->time_ms();
    report << " " << fits[i]->algorithm << "=" << ms << "ms";
    if (i == 0 || ms < best_ms) {
      best = fits[i];
      best_ms = ms;
    }
  }
  VLOG(1) << "searched " << Where(request) << ":" << report.str() << " -> " << best->algorithm;
  return *best;
}

// "KEY\tALGORITHM\tBYTES" -> an entry, or an error message.
std::string ParseLine(const std::string& line, std::string* key, AlgorithmChoice* choice) {
  const size_t first = line.find('\t');
  const size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
  if (second == std::string::npos || line.find('\t', second + 1) != std::string::npos) {
    return "expected KEY<TAB>ALGORITHM<TAB>WORKSPACE_BYTES";
  }
  *key = line.substr(0, first);
  choice->algorithm = line.substr(first + 1, second - first - 1);
  const std::string bytes = line.substr(second + 1);
  if (key->empty()) return "empty key";
  if (choice->algorithm.empty()) return "empty algorithm for key '" + *key + "'";
  const auto [end, error] =
      std::from_chars(bytes.data(), bytes.data() + bytes.size(), choice->workspace_bytes);
  if (error != std::errc() || end != bytes.data() + bytes.size() || choice->workspace_bytes < 0) {
    return "workspace bytes '" + bytes + "' is not a non-negative integer";
  }
  return "";
}

// Every entry of the file at `path`, or throws NotFound / InvalidArgument naming file and line.
std::map<std::string, AlgorithmChoice> ReadFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw Error(Status::NotFound("cannot open algorithm cache '" + path + "'"));
  const auto malformed = [&path](int line, const std::string& what) {
    return Error(Status::InvalidArgument("algorithm cache '" + path + "' line " +
                                         std::to_string(line) + ": " + what));
  };
  std::string line;
  if (!std::getline(file, line) || line != kVersionLine) {
    throw malformed(1, "expected the version line '" + std::string(kVersionLine) + "', got '" +
                           line + "'");
  }
  std::map<std::string, AlgorithmChoice> entries;
  for (int number = 2; std::getline(file, line); ++number) {
    if (!line.empty() && line[0] == '#') continue;
    std::string key;
    AlgorithmChoice choice;
    const std::string error = ParseLine(line, &key, &choice);
    if (!error.empty()) throw malformed(number, error);
    if (!entries.emplace(key, choice).second) throw malformed(number, "key '" + key + "' again");
  }
  if (file.bad()) throw Error(Status::IoError("reading algorithm cache '" + path + "' failed"));
  return entries;
}

}  // namespace

int64_t SearchWorkspaceLimit(const Device& device) {
  if (device.is_host()) return -1;
  if (const CachingAllocator* allocator = CachingAllocatorOf(device)) {
    return allocator->AvailableWithoutReserve();
  }
  return GetDeviceContext(device)->free_bytes();
}

std::mutex& DefaultSearchMutex(const Device& device) {
  static std::mutex map_mu;
  static auto* mutexes = new std::map<std::string, std::unique_ptr<std::mutex>>();
  const std::string name = device.is_host() ? "host" : device.ToString();
  std::lock_guard<std::mutex> lock(map_mu);
  std::unique_ptr<std::mutex>& mu = (*mutexes)[name];
  if (mu == nullptr) mu = std::make_unique<std::mutex>();
  return *mu;
}

AlgorithmRegistry& AlgorithmRegistry::Global() {
  static auto* registry = new AlgorithmRegistry(ModeFromEnvironment());
  return *registry;
}

AlgorithmRegistry::AlgorithmRegistry(SearchMode mode) : mode_(mode) {}

AlgorithmChoice AlgorithmRegistry::Choose(const AlgorithmRequest& request,
                                          const AlgorithmFinder& finder) {
  if (request.key.empty() || HasSeparator(request.key)) {
    throw Error(Status::InvalidArgument(Where(request) + ": a key must be one non-empty line "
                                                         "without tabs"));
  }
  SearchMode mode;
  {
    std::unique_lock<std::mutex> lock(mu_);
    Entry& entry = entries_[request.key];
    const int64_t failures = entry.failures;
    search_done_.wait(lock, [&entry] { return !entry.searching; });
    if (entry.choice) return *entry.choice;
    if (entry.failures != failures) throw Error(entry.failure);  // the search we waited for
    entry.searching = true;
    ++searches_;
    mode = mode_;
  }
  Status failure;
  try {
    const AlgorithmChoice choice = Search(request, finder, mode);
    std::lock_guard<std::mutex> lock(mu_);
    Entry& entry = entries_[request.key];
    entry.choice = choice;
    entry.searching = false;
    search_done_.notify_all();
    return choice;
  } catch (const Error& e) {
    failure = e.status();
  } catch (const std::exception& e) {
    failure = Status::Internal(Where(request) + ": the search failed: " + e.what());
  }
  std::lock_guard<std::mutex> lock(mu_);
  Entry& entry = entries_[request.key];
  entry.searching = false;
  ++entry.failures;
  entry.failure = failure;
  search_done_.notify_all();
  throw Error(failure);
}

AlgorithmChoice AlgorithmRegistry::Search(const AlgorithmRequest& request,
                                          const AlgorithmFinder& finder, SearchMode mode) {
  std::unique_lock<std::mutex> quiesced = Guard(request.device);
  const std::vector<AlgorithmCandidate> candidates = finder();
  std::vector<const AlgorithmCandidate*> fits;
  std::string needs;
  for (const AlgorithmCandidate& candidate : candidates) {
    if (candidate.algorithm.empty() || HasSeparator(candidate.algorithm)) {
      throw Error(Status::Internal(Where(request) + ": a candidate's name must be one non-empty "
                                                    "word, got '" + candidate.algorithm + "'"));
    }
    needs += (needs.empty() ? "" : ", ") + candidate.algorithm + " needs " +
             std::to_string(candidate.workspace_bytes);
    if (request.workspace_limit < 0 || candidate.workspace_bytes <= request.workspace_limit) {
      fits.push_back(&candidate);
    }
  }
  if (fits.empty()) {
    throw Error(Status::ResourceExhausted(
        Where(request) + ": no algorithm fits the workspace limit of " +
        std::to_string(request.workspace_limit) + " bytes (" +
        (needs.empty() ? std::string("the finder listed none") : needs) + ")"));
  }
  const AlgorithmCandidate& best =
      mode == SearchMode::kRule || fits.size() == 1 ? *fits[0] : PickFastest(fits, request);
  return {best.algorithm, best.workspace_bytes};
}

std::unique_lock<std::mutex> AlgorithmRegistry::Guard(const Device& device) const {
  SearchGuard guard;
  {
    std::lock_guard<std::mutex> lock(mu_);
    guard = guard_;
  }
  if (guard) return guard(device);
  return std::unique_lock<std::mutex>(DefaultSearchMutex(device));
}

std::optional<AlgorithmChoice> AlgorithmRegistry::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.choice;
}

std::map<std::string, AlgorithmChoice> AlgorithmRegistry::Entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, AlgorithmChoice> out;
  for (const auto& [key, entry] : entries_) {
    if (entry.choice) out.emplace(key, *entry.choice);
  }
  return out;
}

Status AlgorithmRegistry::Save(const std::string& path) const {
  const std::map<std::string, AlgorithmChoice> entries = Entries();
  std::ostringstream text;
  text << kVersionLine << "\n";
  for (const auto& [key, choice] : entries) {
    text << key << "\t" << choice.algorithm << "\t" << choice.workspace_bytes << "\n";
  }
  const Status written = WriteFileAtomically(path, text.str());
  if (!written.ok()) {
    return Status(written.code(), "algorithm cache: " + written.message());
  }
  return Status::OK();
}

Status AlgorithmRegistry::Load(const std::string& path, int64_t* loaded) {
  std::map<std::string, AlgorithmChoice> read;
  const Status status = StatusFromCall([&] { read = ReadFile(path); });
  if (!status.ok()) return status;
  int64_t added = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, choice] : read) {
      Entry& entry = entries_[key];
      if (entry.choice || entry.searching) continue;  // an answer given here stands
      entry.choice = std::move(choice);
      ++added;
    }
  }
  if (loaded != nullptr) *loaded = added;
  return Status::OK();
}

int64_t AlgorithmRegistry::searches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return searches_;
}

SearchMode AlgorithmRegistry::mode() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mode_;
}

void AlgorithmRegistry::set_mode(SearchMode mode) {
  std::lock_guard<std::mutex> lock(mu_);
  mode_ = mode;
}

void AlgorithmRegistry::SetSearchGuard(SearchGuard guard) {
  std::lock_guard<std::mutex> lock(mu_);
  guard_ = std::move(guard);
}

void AlgorithmRegistry::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = it->second.searching ? std::next(it) : entries_.erase(it);  // searchers hold references
  }
  searches_ = 0;
}

}  // namespace braid
