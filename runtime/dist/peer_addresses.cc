#include "runtime/dist/peer_addresses.h"

#include <gloo/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/address.h>

#include <cctype>
#include <sstream>

namespace braid {
namespace {

std::string EntryKey(const std::string& job, int rank) {
  return job + "/pair_addresses/" + std::to_string(rank);
}

// One line per peer: "<peer rank> <this rank's end of the connection>".
std::string OwnEnds(gloo::Context& context) {
  std::string entry;
  for (int peer = 0; peer < context.size; ++peer) {
    if (peer == context.rank) continue;
    entry += std::to_string(peer) + " " + context.getPair(peer)->address().str() + "\n";
  }
  return entry;
}

// The address `entry` (written by another rank) gives for its end of the connection to `rank`.
std::string EndFacing(const std::string& entry, int rank) {
  std::istringstream lines(entry);
  int peer = -1;
  std::string address;
  while (lines >> peer >> address) {
    if (peer == rank) return address;
  }
  return "";
}

// The listening address `peer` advertised to `rank` for their pair, as Gloo's connectFullMesh
// stored it: every pair's address bytes but the peer's own, in rank order.
std::string AdvertisedTo(gloo::rendezvous::Store& gloo_keys, int peer, int rank, int size) {
  const std::vector<char> all = gloo_keys.get(std::to_string(peer));
  const size_t each = all.size() / (size - 1);
  const size_t index = rank > peer ? rank - 1 : rank;
  if (each == 0 || all.size() % (size - 1) != 0) return "";
  const std::vector<char> bytes(all.begin() + index * each, all.begin() + (index + 1) * each);
  return gloo::transport::tcp::Address(bytes).str();
}

// Whether `address` occurs in `message` as a whole ("[::1]:4013" is not in "[::1]:40130").
bool Contains(const std::string& message, const std::string& address) {
  for (size_t at = message.find(address); at != std::string::npos;
       at = message.find(address, at + 1)) {
    const size_t end = at + address.size();
    if (end == message.size() || !std::isdigit(static_cast<unsigned char>(message[end]))) {
      return true;
    }
  }
  return false;
}

}  // namespace

Status PeerAddresses::Exchange(gloo::Context& context, RendezvousStore& store,
                               const std::string& job, RendezvousStore::Deadline deadline,
                               PeerAddresses* peers) {
  Status s = store.Set(EntryKey(job, context.rank), OwnEnds(context));
  gloo::rendezvous::PrefixStore gloo_keys(job, store.store());
  peers->by_rank_.assign(context.size, {});
  for (int peer = 0; peer < context.size && s.ok(); ++peer) {
    if (peer == context.rank) continue;
    std::string entry;
    s = store.Get(EntryKey(job, peer), deadline, &entry);
    auto& addresses = peers->by_rank_[peer];
    addresses.push_back(EndFacing(entry, context.rank));
    try {
      addresses.push_back(AdvertisedTo(gloo_keys, peer, context.rank, context.size));
    } catch (const std::exception& e) {
      s = Status::IoError("reading rank " + std::to_string(peer) + "'s Gloo addresses from " +
                          store.url() + " failed: " + e.what());
    }
  }
  return s;
}

std::vector<int> PeerAddresses::RanksIn(const std::string& message) const {
  std::vector<int> ranks;
  for (size_t r = 0; r < by_rank_.size(); ++r) {
    for (const std::string& address : by_rank_[r]) {
      if (!address.empty() && Contains(message, address)) {
        ranks.push_back(int(r));
        break;
      }
    }
  }
  return ranks;
}

std::string DescribeRanks(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

}  // namespace braid
