#include "runtime/collective.h"

#include <utility>

#include "runtime/sim_device.h"
#include "runtime/sim_stream.h"

namespace braid {

CollectiveRendezvous::CollectiveRendezvous(std::string what, std::vector<Device> ranks)
    : what_(std::move(what)), ranks_(std::move(ranks)), passed_(ranks_.size(), 0) {}

void CollectiveRendezvous::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  std::fill(passed_.begin(), passed_.end(), 0);
  arrivals_.clear();
  failed_ = Status::OK();
}

void CollectiveRendezvous::Arrive(int rank, const std::string& stage) {
  std::unique_lock<std::mutex> lock(mu_);
  const int barrier = passed_.at(rank)++;
  if (static_cast<int>(arrivals_.size()) <= barrier) arrivals_.resize(barrier + 1, 0);
  ++arrivals_[barrier];
  cv_.notify_all();
  auto ready = [&] { return !failed_.ok() || arrivals_[barrier] == size(); };
  if (SimStream::Current() != nullptr) {
    SimDevice::WaitInKernel(lock, cv_, ready, [&] {
      return what_ + ", rank " + std::to_string(rank) + " of " + std::to_string(size()) + " on " +
             ranks_[rank].ToString() + ", at its '" + stage + "' barrier: waits for " +
             Waiting(barrier);
    });
  } else {
    cv_.wait(lock, ready);
  }
  if (!failed_.ok()) throw Error(failed_);
}

void CollectiveRendezvous::Fail(const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_.ok()) failed_ = why;
  cv_.notify_all();
}

std::string CollectiveRendezvous::Waiting(int barrier) const {
  std::string missing;
  for (int r = 0; r < size(); ++r) {
    if (passed_[r] > barrier) continue;
    missing += (missing.empty() ? "" : ", ") + ranks_[r].ToString();
  }
  return missing.empty() ? "nothing" : "rank(s) on " + missing;
}

}  // namespace braid
