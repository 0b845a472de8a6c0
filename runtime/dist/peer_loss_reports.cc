#include "runtime/dist/peer_loss_reports.h"

#include <chrono>
#include <set>
#include <sstream>
#include <utility>

namespace braid {
namespace {

std::string ReportKey(const std::string& job, int rank) {
  return job + "/lost_ranks/" + std::to_string(rank);
}

}  // namespace

PeerLossReports::PeerLossReports(RendezvousStore* store, std::string job, int rank)
    : store_(store), job_(std::move(job)), rank_(rank) {}

void PeerLossReports::Report(const std::vector<int>& ranks) {
  if (ranks.empty() || reported_.exchange(true)) return;
  std::string text;
  for (int r : ranks) text += std::to_string(r) + " ";
  (void)store_->Set(ReportKey(job_, rank_), text);  // a failed record only coarsens messages
}

std::vector<int> PeerLossReports::FirstLost(const std::vector<int>& lost) {
  std::set<int> first;
  std::set<int> seen(lost.begin(), lost.end());
  std::vector<int> pending = lost;
  while (!pending.empty()) {
    const int rank = pending.back();
    pending.pop_back();
    std::string text;
    // An unset key is no report: read without waiting (a deadline already passed).
    if (rank == rank_ ||
        !store_->Get(ReportKey(job_, rank), std::chrono::steady_clock::time_point(), &text).ok()) {
      first.insert(rank);
      continue;
    }
    std::istringstream reported(text);
    for (int r; reported >> r;) {
      if (seen.insert(r).second) pending.push_back(r);
    }
  }
  if (first.empty()) return lost;  // every rank gave up after another: a cycle, no first loss
  return std::vector<int>(first.begin(), first.end());
}

}  // namespace braid
