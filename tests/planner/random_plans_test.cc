// Properties of plans over thousands of random nets: every plan and every renamed net passes the
// independent checker, and the bound is a true antichain.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "planner/blob_lifetimes.h"
#include "planner/lower_bound.h"
#include "planner/memory_plan.h"
#include "planner/packing_problem.h"
#include "planner/renaming.h"
#include "planner/verify_plan.h"
#include "tools/stress/random_net.h"

namespace braid {
namespace {

constexpr int kNets = 2000;

// Random sizes (1..16 KB) for every blob; Relu and Sum in place on input 0.
PlanRequest RandomRequest(const NetDef& net, uint64_t seed, PlanExecutor executor) {
  std::mt19937_64 rng(seed);
  PlanRequest request;
  request.executor = executor;
  for (const OperatorDef& op : net.op()) {
    for (const std::string& b : op.output()) {
      if (!request.blob_bytes.count(b)) request.blob_bytes[b] = 1 + rng() % 16384;
    }
    request.inplace.emplace_back();
    if (op.type() == "Relu" || op.type() == "Sum") request.inplace.back().push_back({0, 0});
  }
  return request;
}

NetDef NetForSeed(uint64_t seed) {
  return RandomNet(seed, {.num_inputs = 3,
                          .num_ops = 10 + static_cast<int>(seed % 50),
                          .concat_split = true,
                          .num_devices = 1 + static_cast<int>(seed % 2),
                          .all_outputs = false});
}

TEST(RandomPlansTest, EveryPlanPassesTheIndependentChecker) {
  int64_t naive = 0, planned = 0, bound = 0;
  for (uint64_t seed = 1; seed <= kNets; ++seed) {
    NetDef net = NetForSeed(seed);
    for (PlanExecutor executor : {PlanExecutor::kDag, PlanExecutor::kSimple}) {
      PlanRequest request = RandomRequest(net, seed, executor);
      MemoryPlan plan = PlanMemory(net, request);
      ASSERT_EQ(VerifyMemoryPlan(net, request, plan), "") << "seed " << seed;
      ASSERT_LE(plan.lower_bound_bytes(), plan.arena_bytes()) << "seed " << seed;
      ASSERT_LE(plan.arena_bytes(), plan.naive_bytes()) << "seed " << seed;
      naive += plan.naive_bytes();
      planned += plan.arena_bytes();
      bound += plan.lower_bound_bytes();
    }
  }
  std::printf("random nets: naive %lld, planned %lld, bound %lld bytes (planned/bound %.4f)\n",
              static_cast<long long>(naive), static_cast<long long>(planned),
              static_cast<long long>(bound), static_cast<double>(planned) / bound);
}

TEST(RandomPlansTest, EveryRenamedNetIsEquivalent) {
  for (uint64_t seed = 1; seed <= kNets; ++seed) {
    NetDef net = NetForSeed(seed);
    NetDef renamed = RenameSharedBlobs(net, RandomRequest(net, seed, PlanExecutor::kDag));
    ASSERT_EQ(VerifyRenamedNet(net, renamed), "") << "seed " << seed;
  }
}

TEST(RandomPlansTest, TheBoundIsAnAntichainOfExactlyItsWeight) {
  for (uint64_t seed = 1; seed <= kNets / 4; ++seed) {
    NetDef net = NetForSeed(seed);
    PlanRequest request = RandomRequest(net, seed, PlanExecutor::kDag);
    BlobLifetimes lifetimes(net, request);
    for (const std::vector<int>& mine : lifetimes.BlobsByDevice()) {
      PackingProblem problem = PackingProblemFor(lifetimes, mine);
      std::vector<int> antichain;
      const int64_t bound = MaxWeightAntichain(problem, &antichain);
      int64_t weight = 0;
      for (int a : antichain) {
        weight += problem.bytes[a];
        for (int b : antichain) ASSERT_FALSE(a != b && problem.Comparable(a, b)) << "seed " << seed;
      }
      ASSERT_EQ(weight, bound) << "seed " << seed;
    }
  }
}

TEST(RandomPlansTest, SimpleExecutorBoundIsThePeakOfLiveBytes) {
  for (uint64_t seed = 1; seed <= kNets / 4; ++seed) {
    NetDef net = RandomNet(seed, {.num_ops = 30, .all_outputs = false});
    PlanRequest request = RandomRequest(net, seed, PlanExecutor::kSimple);
    request.inplace.clear();  // intervals only
    BlobLifetimes lifetimes(net, request);
    int64_t peak = 0;
    for (int op = 0; op < net.op_size(); ++op) {
      int64_t live = 0;
      for (const BlobLifetime& b : lifetimes.blobs()) {
        if (b.writes.front() <= op && op <= b.touches.back()) live += b.bytes;
      }
      peak = std::max(peak, live);
    }
    ASSERT_EQ(PlanMemory(net, request).lower_bound_bytes(), peak) << "seed " << seed;
  }
}

}  // namespace
}  // namespace braid
