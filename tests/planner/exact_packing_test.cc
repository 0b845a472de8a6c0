#include "planner/exact_packing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "planner/packing_problem.h"

namespace braid {
namespace {

constexpr int64_t kUnit = 64;

PackingProblem Unordered(const std::vector<int64_t>& units) {
  PackingProblem p;
  for (int64_t u : units) p.bytes.push_back(u * kUnit);
  p.precedes.assign(units.size(), Bitset(static_cast<int>(units.size())));
  return p;
}

// Adds a < b and closes the order transitively.
void AddPrecedes(PackingProblem* p, int a, int b) {
  const int n = p->size();
  for (int x = 0; x < n; ++x) {
    if (x != a && !p->precedes[x].Test(a)) continue;
    p->precedes[x].Set(b);
    p->precedes[x].OrWith(p->precedes[b]);
  }
}

bool ComparablePair(const PackingProblem& p, int a, int b) {
  return p.precedes[a].Test(b) || p.precedes[b].Test(a);
}

// Checked pair by pair from the problem's definition, not through the solvers' code.
::testing::AssertionResult ValidPacking(const PackingProblem& p,
                                        const std::vector<int64_t>& offsets) {
  if (static_cast<int>(offsets.size()) != p.size()) {
    return ::testing::AssertionFailure() << "wrong number of offsets";
  }
  for (int a = 0; a < p.size(); ++a) {
    if (offsets[a] < 0) return ::testing::AssertionFailure() << "blob " << a << " below 0";
    for (int b = a + 1; b < p.size(); ++b) {
      const bool overlap =
          offsets[a] < offsets[b] + p.bytes[b] && offsets[b] < offsets[a] + p.bytes[a];
      if (!overlap) continue;
      const bool same = p.same_offset.count({a, b}) || p.same_offset.count({b, a});
      if (ComparablePair(p, a, b) && (!same || offsets[a] == offsets[b])) continue;
      return ::testing::AssertionFailure() << "blobs " << a << " at " << offsets[a] << " and " << b
                                           << " at " << offsets[b] << " may not overlap";
    }
  }
  return ::testing::AssertionSuccess();
}

// Heaviest set of pairwise incomparable blobs, by enumerating them all.
int64_t HeaviestAntichain(const PackingProblem& p, int next = 0, std::vector<int> chosen = {}) {
  int64_t weight = 0;
  for (int c : chosen) weight += p.bytes[c];
  int64_t best = weight;
  for (int b = next; b < p.size(); ++b) {
    if (std::any_of(chosen.begin(), chosen.end(), [&](int c) { return ComparablePair(p, b, c); })) {
      continue;
    }
    chosen.push_back(b);
    best = std::max(best, HeaviestAntichain(p, b + 1, chosen));
    chosen.pop_back();
  }
  return best;
}

// Whether blobs from `b` on fit below `limit` with offsets on the kUnit grid.
bool FitsOnGrid(const PackingProblem& p, int64_t limit, int b, std::vector<int64_t>* offsets) {
  if (b == p.size()) return true;
  for (int64_t at = 0; at + p.bytes[b] <= limit; at += kUnit) {
    (*offsets)[b] = at;
    std::vector<int64_t> placed(offsets->begin(), offsets->begin() + b + 1);
    PackingProblem prefix = p;
    prefix.bytes.resize(b + 1);
    if (ValidPacking(prefix, placed) && FitsOnGrid(p, limit, b + 1, offsets)) return true;
  }
  return false;
}

// The optimum by trying every arena size and every grid offset: independent of PackExact.
int64_t GridOptimum(const PackingProblem& p) {
  std::vector<int64_t> offsets(p.size());
  int64_t limit = HeaviestAntichain(p);
  while (!FitsOnGrid(p, limit, 0, &offsets)) limit += kUnit;
  return limit;
}

// A random partial order (reachability of a random DAG), sizes and in-place pairs.
PackingProblem RandomProblem(std::mt19937* rng, int n, int max_units) {
  std::uniform_int_distribution<int64_t> units(1, max_units);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  const double edge_probability = 0.05 + 0.6 * coin(*rng);
  std::vector<int64_t> sizes(n);
  for (int64_t& u : sizes) u = units(*rng);
  PackingProblem p = Unordered(sizes);
  for (int a = n - 1; a >= 0; --a) {
    for (int b = a + 1; b < n; ++b) {
      if (coin(*rng) < edge_probability) AddPrecedes(&p, a, b);
    }
  }
  std::vector<bool> target(n, false);
  for (int a = 0; a < n; ++a) {
    std::vector<int> later;
    for (int b = a + 1; b < n; ++b) {
      if (p.precedes[a].Test(b) && !target[b]) later.push_back(b);
    }
    if (later.empty() || coin(*rng) > 0.25) continue;
    const int b = later[std::uniform_int_distribution<size_t>(0, later.size() - 1)(*rng)];
    p.same_offset.insert({a, b});
    target[b] = true;
  }
  return p;
}

TEST(PackExactTest, MutuallyConflictingBlobsNeedTheirSum) {
  const PackingProblem p = Unordered({1, 2, 3});
  const std::vector<int64_t> offsets = PackExact(p);
  EXPECT_TRUE(ValidPacking(p, offsets));
  EXPECT_EQ(ArenaSize(p, offsets), 6 * kUnit);
}

TEST(PackExactTest, ChainNeedsOnlyItsLargestBlob) {
  PackingProblem p = Unordered({2, 5, 1, 3});
  for (int b = 0; b + 1 < p.size(); ++b) AddPrecedes(&p, b, b + 1);
  const std::vector<int64_t> offsets = PackExact(p);
  EXPECT_TRUE(ValidPacking(p, offsets));
  EXPECT_EQ(ArenaSize(p, offsets), 5 * kUnit);
}

TEST(PackExactTest, InPlacePairSharesOneOffsetBesideAConflictingBlob) {
  // 0 dies in place into 1; 2 lives through both.
  PackingProblem p = Unordered({2, 2, 1});
  AddPrecedes(&p, 0, 1);
  p.same_offset.insert({0, 1});
  const std::vector<int64_t> offsets = PackExact(p);
  EXPECT_TRUE(ValidPacking(p, offsets));
  EXPECT_EQ(ArenaSize(p, offsets), 3 * kUnit);
  EXPECT_EQ(offsets[0], offsets[1]);
}

TEST(PackExactTest, FindsOptimumWhereLargestFirstBestFitDoesNot) {
  // Conflicts form the path 0 - 1 - 3 - 2 (sizes 2, 1, 1, 2). Largest first puts 0 and 2 both at
  // the bottom, then 1 on 0 and 3 above 1: four units. Three suffice: 3 below 2, 1 above 0.
  PackingProblem p = Unordered({2, 1, 2, 1});
  AddPrecedes(&p, 0, 2);
  AddPrecedes(&p, 0, 3);
  AddPrecedes(&p, 1, 2);
  const std::vector<int64_t> exact = PackExact(p), greedy = PackGreedy(p);
  EXPECT_TRUE(ValidPacking(p, exact));
  EXPECT_EQ(ArenaSize(p, exact), 3 * kUnit);
  EXPECT_TRUE(ValidPacking(p, greedy));
  std::cout << "PackGreedy needs " << ArenaSize(p, greedy) / kUnit << " units here\n";
}

TEST(PackExactTest, NoBlobsNeedNoArena) {
  const PackingProblem p = Unordered({});
  EXPECT_TRUE(PackExact(p).empty());
}

TEST(PackExactTest, RejectsMoreThanThirtyBlobs) {
  EXPECT_THROW(PackExact(Unordered(std::vector<int64_t>(kMaxExactBlobs + 1, 1))),
               std::invalid_argument);
  EXPECT_NO_THROW(PackExact(Unordered(std::vector<int64_t>(kMaxExactBlobs, 1))));
}

TEST(PackExactTest, MatchesGridSearchOnTinyProblems) {
  const uint32_t seed = 20261122;
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 300; ++trial) {
    const PackingProblem p = RandomProblem(&rng, 2 + trial % 5, 3);
    const std::vector<int64_t> offsets = PackExact(p);
    ASSERT_TRUE(ValidPacking(p, offsets)) << "seed " << seed << " trial " << trial;
    ASSERT_EQ(ArenaSize(p, offsets), GridOptimum(p)) << "seed " << seed << " trial " << trial;
  }
}

TEST(PackExactTest, RandomProblemsLieBetweenAntichainBoundAndGreedy) {
  const uint32_t seed = 7031;
  std::mt19937 rng(seed);
  const int trials = 400;
  double gap_sum = 0, gap_max = 0;
  int greedy_worse = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const PackingProblem p = RandomProblem(&rng, 2 + trial % 13, 16);
    const std::vector<int64_t> greedy = PackGreedy(p);
    const std::vector<int64_t> exact = PackExact(p);
    ASSERT_TRUE(ValidPacking(p, greedy)) << "greedy, seed " << seed << " trial " << trial;
    ASSERT_TRUE(ValidPacking(p, exact)) << "exact, seed " << seed << " trial " << trial;
    const int64_t greedy_size = ArenaSize(p, greedy), exact_size = ArenaSize(p, exact);
    ASSERT_LE(exact_size, greedy_size) << "seed " << seed << " trial " << trial;
    ASSERT_GE(exact_size, HeaviestAntichain(p)) << "seed " << seed << " trial " << trial;
    const double gap = static_cast<double>(greedy_size) / exact_size - 1;
    gap_sum += gap;
    gap_max = std::max(gap_max, gap);
    greedy_worse += greedy_size > exact_size;
  }
  const std::string summary = "greedy over exact on " + std::to_string(trials) +
                              " problems of 2-14 blobs (seed " + std::to_string(seed) +
                              "): mean gap " + std::to_string(100 * gap_sum / trials) +
                              "%, max gap " + std::to_string(100 * gap_max) + "%, greedy worse " +
                              std::to_string(greedy_worse) + " times";
  RecordProperty("greedy_gap", summary);
  std::cout << summary << "\n";
}

}  // namespace
}  // namespace braid
