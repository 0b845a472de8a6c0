// PeerLossReports: which rank was lost first, when losses cascade. A rank whose collective fails
// on a lost connection returns its error, and its process usually exits; that closes its own
// connections, so a rank that only talked to it sees "a connection to rank 2 was lost" although
// rank 2 merely gave up after losing rank 3. Each rank therefore records, in the job's store and
// before its error is returned, the ranks it lost ("<job>/lost_ranks/<rank>", once per group);
// a later loss follows those records back to the ranks that left none (they died first).
//
//   PeerLossReports reports(&store, "job", /*rank=*/1);
//   reports.Report({2});                        // this rank lost rank 2
//   std::vector<int> first = reports.FirstLost({2});  // {3} when rank 2 had reported losing 3
//
// The record is written before the error is returned, so it is in the store before the reporting
// rank can close a connection by exiting. Store failures are ignored: the records only refine a
// message. Thread safety: Report and FirstLost may be called from several threads at once.
#ifndef BRAID_RUNTIME_DIST_PEER_LOSS_REPORTS_H_
#define BRAID_RUNTIME_DIST_PEER_LOSS_REPORTS_H_

#include <atomic>
#include <string>
#include <vector>

#include "runtime/dist/rendezvous_store.h"

namespace braid {

class PeerLossReports {
 public:
  // `store` must outlive this object.
  PeerLossReports(RendezvousStore* store, std::string job, int rank);

  // Records that this rank lost `ranks`; only the first call per object writes (keys are
  // written once).
  void Report(const std::vector<int>& ranks);

  // The ranks (ascending) lost first behind `lost`: each rank of `lost` that recorded losses of its
  // own is replaced by those, transitively. Equals `lost` when no rank of it recorded anything.
  std::vector<int> FirstLost(const std::vector<int>& lost);

 private:
  RendezvousStore* const store_;
  const std::string job_;
  const int rank_;
  std::atomic<bool> reported_{false};
};

}  // namespace braid

#endif  // BRAID_RUNTIME_DIST_PEER_LOSS_REPORTS_H_
