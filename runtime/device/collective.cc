#include "runtime/device/collective.h"

#include <glog/logging.h>

#include <set>
#include <utility>

#include "runtime/core/device_context.h"

#include "runtime/device/sim/sim_device.h"
#include "runtime/device/sim/sim_stream.h"

namespace braid {

const char* CollectiveEngineName(CollectiveEngine engine) {
  switch (engine) {
    case CollectiveEngine::kHost:
      return "host";
    case CollectiveEngine::kRankKernels:
      return "rank kernels";
    case CollectiveEngine::kNccl:
      return "NCCL";
  }
  return "?";
}

namespace {

std::string Placement(const std::vector<Device>& ranks, const std::vector<Device>& physical) {
  std::string text;
  for (size_t r = 0; r < ranks.size(); ++r) {
    text += (r ? ", " : "") + ranks[r].ToString();
    if (physical[r] == ranks[r]) continue;
    text += std::string(" (physical ") + (physical[r].type == DeviceType::kSim ? "sim " : "") +
            "GPU " + std::to_string(physical[r].id) + ")";
  }
  return text;
}

}  // namespace

Status ChooseCollectiveEngine(const std::vector<Device>& ranks,
                              const std::vector<Device>& physical, CollectiveEngine* engine) {
  // Invariant: callers map every rank to its physical device.
  CHECK_EQ(ranks.size(), physical.size());
  for (const Device& d : ranks) {
    if (d.type != ranks.front().type) {
      return Status::InvalidArgument("a collective over " + Placement(ranks, physical) +
                                     " mixes device types");
    }
  }
  if (ranks.empty() || ranks.front().is_host()) {
    *engine = CollectiveEngine::kHost;
    return Status::OK();
  }
  if (ranks.front().type != DeviceType::kCuda) {
    *engine = CollectiveEngine::kRankKernels;
    return Status::OK();
  }
  std::set<std::pair<int, int>> cards;
  for (const Device& p : physical) cards.insert({static_cast<int>(p.type), p.id});
  if (cards.size() == ranks.size()) {
    *engine = CollectiveEngine::kNccl;
  } else if (cards.size() == 1) {
    *engine = CollectiveEngine::kRankKernels;
  } else {
    return Status::InvalidArgument(
        "a collective over " + Placement(ranks, physical) +
        " has ranks that share a GPU and ranks that do not: NCCL refuses two ranks on one GPU and "
        "braid's device-side all-reduce spans one GPU; map every rank to one GPU or each to its "
        "own (BRAID_CUDA_DEVICES)");
  }
  return Status::OK();
}

Status ChooseCollectiveEngine(const std::vector<Device>& ranks, CollectiveEngine* engine) {
  std::vector<Device> physical;
  Status s = StatusFromCall([&] {
    for (const Device& d : ranks) physical.push_back(PhysicalDevice(d));
  });
  return s.ok() ? ChooseCollectiveEngine(ranks, physical, engine) : s;
}

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
