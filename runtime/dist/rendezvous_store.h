// RendezvousStore: the Gloo key-value store where the ranks of a job meet, opened from a URL.
//
//   file:///path/to/dir  -> gloo::rendezvous::FileStore on that (shared) directory, created if
//                           missing. Keys are files; a store directory must not be reused by a job of
//                           the same name (Gloo refuses to overwrite a key).
//   redis://HOST:PORT    -> gloo::rendezvous::RedisStore (retried until the deadline, so a server
//                           that starts a little later than the ranks is fine).
//
// Arrive records this rank's arrival under "<job>/arrived/<rank>" and waits until every rank of the
// job has arrived, so a rank that never comes is reported by number rather than as a Gloo key
// timeout. Set and Get share other values (Gloo pair addresses, NCCL unique ids) through the store;
// keys are written once (a file store refuses to overwrite one), so each use needs its own key.
// Used by ProcessGroup (runtime/dist/process_group.h), which keeps its store for the job's life.
//
// Thread safety: every method may be called from several threads at once (the Gloo store is used
// under a mutex; waiting methods poll it, so one waiting thread does not hold up the others).
#ifndef BRAID_RUNTIME_DIST_RENDEZVOUS_STORE_H_
#define BRAID_RUNTIME_DIST_RENDEZVOUS_STORE_H_

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "braid/status.h"

namespace gloo::rendezvous {
class Store;
}  // namespace gloo::rendezvous

namespace braid {

class RendezvousStore {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  ~RendezvousStore();

  // InvalidArgument for a malformed URL; IoError naming the URL when the store cannot be reached
  // before `deadline`.
  static Status Open(const std::string& url, Deadline deadline,
                     std::unique_ptr<RendezvousStore>* store);

  // DeadlineExceeded naming the ranks that had not arrived at `deadline`.
  Status Arrive(const std::string& job, int rank, int world_size, Deadline deadline);

  // Sets `key` (the full key: callers put their job's name in it); IoError naming the URL.
  Status Set(const std::string& key, const std::string& value);
  // Waits until `key` is set and reads it; DeadlineExceeded naming the key and the URL when it is
  // still unset at `deadline`.
  Status Get(const std::string& key, Deadline deadline, std::string* value);

  // For Gloo's own rendezvous (connectFullMesh), on one thread, before any other method is used.
  gloo::rendezvous::Store& store() { return *store_; }
  const std::string& url() const { return url_; }

 private:
  using Check = std::function<bool(const std::vector<std::string>&)>;
  RendezvousStore(std::string url, std::unique_ptr<gloo::rendezvous::Store> store, Check check);
  // Whether `key` is set, without blocking; throws what the Gloo store throws.
  bool Has(const std::string& key);

  const std::string url_;
  std::mutex mu_;                                   // serialises every use of store_
  std::unique_ptr<gloo::rendezvous::Store> store_;  // guarded by mu_ (but see store())
  const Check check_;                               // whether every key is set, without blocking
};

}  // namespace braid

#endif  // BRAID_RUNTIME_DIST_RENDEZVOUS_STORE_H_
