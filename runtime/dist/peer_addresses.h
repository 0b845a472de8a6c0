// PeerAddresses: which rank a Gloo TCP error is about. Gloo names a failed connection by its peer's
// socket address ("Connection closed by peer [127.0.0.1]:41234"); a rank number is what a user can
// act on.
//
// Gloo prints a pair's peer address, which is one of two addresses of the peer: its end of their
// connection, or (when the peer connected first and Gloo's connect later set the address it had
// been given) the listening address the peer advertised for that pair. Exchange runs once after
// Gloo connected the full mesh and learns both for every peer: each rank publishes, for each peer,
// its own end of their connection (Gloo's pair address) under "<job>/pair_addresses/<rank>" and
// reads the entries the peers wrote for it; the advertised addresses are those Gloo exchanged in
// the same store (under "<job>/<rank>").
//
//   PeerAddresses peers;
//   Status s = PeerAddresses::Exchange(*context, store, "job", deadline, &peers);
//   std::vector<int> ranks = peers.RanksIn(exception.what());  // {} when it names no peer
//
// An error that names no address (an all-reduce that timed out waiting) names no rank: callers say
// the rank is unknown rather than guess. Addresses rewritten between hosts (NAT) match nothing.
//
// Thread safety: Exchange on one thread; afterwards RanksIn is const and may run on any thread.
#ifndef BRAID_RUNTIME_DIST_PEER_ADDRESSES_H_
#define BRAID_RUNTIME_DIST_PEER_ADDRESSES_H_

#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/dist/rendezvous_store.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace braid {

class PeerAddresses {
 public:
  // DeadlineExceeded or IoError (naming the key and store) when a peer's entry cannot be read.
  static Status Exchange(gloo::Context& context, RendezvousStore& store, const std::string& job,
                         RendezvousStore::Deadline deadline, PeerAddresses* peers);

  // The ranks (ascending) whose address `message` contains.
  std::vector<int> RanksIn(const std::string& message) const;

 private:
  // The addresses Gloo may print for rank r (none for this rank).
  std::vector<std::vector<std::string>> by_rank_;
};

// "rank 3" or "ranks 1, 3".
std::string DescribeRanks(const std::vector<int>& ranks);

}  // namespace braid

#endif  // BRAID_RUNTIME_DIST_PEER_ADDRESSES_H_
