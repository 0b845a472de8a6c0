#include "runtime/dist/rendezvous_store.h"

#define HIREDIS_NESTED_INCLUDE 1  // Debian installs <hiredis/hiredis.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/redis_store.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

namespace braid {
namespace {

constexpr char kFileScheme[] = "file://";
constexpr char kRedisScheme[] = "redis://";
constexpr auto kPollInterval = std::chrono::milliseconds(20);

// FileStore's check is protected; Arrive polls with it so it can stop at its own deadline.
class PollableFileStore final : public gloo::rendezvous::FileStore {
 public:
  using FileStore::FileStore;
  bool Has(const std::vector<std::string>& keys) { return check(keys); }
};

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

Status OpenFileStore(const std::string& url, std::unique_ptr<PollableFileStore>* store) {
  const std::string path = url.substr(sizeof(kFileScheme) - 1);
  if (path.empty() || path[0] != '/') {
    return Status::InvalidArgument("rendezvous URL '" + url +
                                   "' needs an absolute path (file:///path/to/dir)");
  }
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) {
    return Status::IoError("cannot create the rendezvous directory '" + path + "' of " + url +
                           ": " + error.message());
  }
  try {
    *store = std::make_unique<PollableFileStore>(path);
  } catch (const std::exception& e) {
    return Status::IoError("cannot open the rendezvous store " + url + ": " + e.what());
  }
  return Status::OK();
}

Status ParseHostPort(const std::string& url, std::string* host, int* port) {
  const std::string rest = url.substr(sizeof(kRedisScheme) - 1);
  const size_t colon = rest.rfind(':');
  try {
    if (colon == std::string::npos || colon == 0) throw std::invalid_argument("no port");
    *host = rest.substr(0, colon);
    size_t used = 0;
    *port = std::stoi(rest.substr(colon + 1), &used);
    if (used != rest.size() - colon - 1 || *port <= 0 || *port > 65535) {
      throw std::invalid_argument("bad port");
    }
  } catch (const std::exception&) {
    return Status::InvalidArgument("rendezvous URL '" + url + "' is not redis://HOST:PORT");
  }
  return Status::OK();
}

// Whether HOST:PORT accepts a TCP connection now (*error: why not). Probing first spares Gloo's
// RedisStore constructor, which leaks its hiredis context each time its connection fails.
bool Reachable(const std::string& host, int port, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int resolved = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (resolved != 0) {
    *error = "cannot resolve " + host + ": " + gai_strerror(resolved);
    return false;
  }
  bool connected = false;
  for (addrinfo* a = found; a != nullptr && !connected; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    connected = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    if (!connected) *error = std::string("connect: ") + std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  return connected;
}

Status OpenRedisStore(const std::string& url, RendezvousStore::Deadline deadline,
                      std::unique_ptr<gloo::rendezvous::RedisStore>* store) {
  std::string host;
  int port = 0;
  Status s = ParseHostPort(url, &host, &port);
  if (!s.ok()) return s;
  std::string last_error;
  do {
    if (!Reachable(host, port, &last_error)) {
      std::this_thread::sleep_for(kPollInterval * 5);
      continue;
    }
    try {
      *store = std::make_unique<gloo::rendezvous::RedisStore>(host, port);
      return Status::OK();
    } catch (const std::exception& e) {
      last_error = e.what();
    }
    std::this_thread::sleep_for(kPollInterval * 5);
  } while (std::chrono::steady_clock::now() < deadline);
  return Status::IoError("cannot reach the rendezvous store " + url +
                         " before the timeout: " + last_error);
}

std::string ArrivalKey(const std::string& job, int rank) {
  return job + "/arrived/" + std::to_string(rank);
}

}  // namespace

RendezvousStore::RendezvousStore(std::string url, std::unique_ptr<gloo::rendezvous::Store> store,
                                 Check check)
    : url_(std::move(url)), store_(std::move(store)), check_(std::move(check)) {}

RendezvousStore::~RendezvousStore() = default;

bool RendezvousStore::Has(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return check_({key});
}

Status RendezvousStore::Open(const std::string& url, Deadline deadline,
                             std::unique_ptr<RendezvousStore>* store) {
  if (StartsWith(url, kFileScheme)) {
    std::unique_ptr<PollableFileStore> file;
    Status s = OpenFileStore(url, &file);
    if (!s.ok()) return s;
    PollableFileStore* raw = file.get();
    store->reset(new RendezvousStore(url, std::move(file),
                                     [raw](const std::vector<std::string>& keys) {
                                       return raw->Has(keys);
                                     }));
    return Status::OK();
  }
  if (StartsWith(url, kRedisScheme)) {
    std::unique_ptr<gloo::rendezvous::RedisStore> redis;
    Status s = OpenRedisStore(url, deadline, &redis);
    if (!s.ok()) return s;
    gloo::rendezvous::RedisStore* raw = redis.get();
    store->reset(new RendezvousStore(url, std::move(redis),
                                     [raw](const std::vector<std::string>& keys) {
                                       return raw->check(keys);
                                     }));
    return Status::OK();
  }
  return Status::InvalidArgument("rendezvous URL '" + url +
                                 "' must start with file:// or redis://");
}

Status RendezvousStore::Arrive(const std::string& job, int rank, int world_size,
                               Deadline deadline) {
  try {
    Status s = Set(ArrivalKey(job, rank), "1");
    if (!s.ok()) return s;
    std::vector<int> missing;
    for (;;) {
      missing.clear();
      for (int r = 0; r < world_size; ++r) {
        if (!Has(ArrivalKey(job, r))) missing.push_back(r);
      }
      if (missing.empty()) return Status::OK();
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(kPollInterval);
    }
    std::string ranks;
    for (int r : missing) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    return Status::DeadlineExceeded(
        "rank(s) " + ranks + " of " + std::to_string(world_size) + " never arrived in " + url_ +
        " (keys '" + ArrivalKey(job, missing.front()) + "'...) before the timeout");
  } catch (const std::exception& e) {
    return Status::IoError("rendezvous through " + url_ + " failed: " + e.what());
  }
}

Status RendezvousStore::Set(const std::string& key, const std::string& value) {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    store_->set(key, std::vector<char>(value.begin(), value.end()));
  } catch (const std::exception& e) {
    return Status::IoError("setting key '" + key + "' in " + url_ + " failed: " + e.what());
  }
  return Status::OK();
}

Status RendezvousStore::Get(const std::string& key, Deadline deadline, std::string* value) {
  try {
    while (!Has(key)) {
      if (std::chrono::steady_clock::now() >= deadline) {
        return Status::DeadlineExceeded("key '" + key + "' was not set in " + url_ +
                                        " before the timeout");
      }
      std::this_thread::sleep_for(kPollInterval);
    }
    std::lock_guard<std::mutex> lock(mu_);
    const std::vector<char> bytes = store_->get(key);
    value->assign(bytes.begin(), bytes.end());
  } catch (const std::exception& e) {
    return Status::IoError("reading key '" + key + "' from " + url_ + " failed: " + e.what());
  }
  return Status::OK();
}

}  // namespace braid
