// Allreduce (ops/collective): every input becomes the sum or mean over all inputs, in place.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ops/collective/pairwise_sum.h"
#include "ops/op_test_util.h"
#include "runtime/core/op_schema.h"

namespace braid::test {
namespace {

TEST(AllreduceTest, EveryInputBecomesTheSumInPlace) {
  Workspace ws;
  Feed<float>(&ws, "cpu_0/g", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "cpu_1/g", {2, 2}, {10, 20, 30, 40});
  Feed<float>(&ws, "cpu_2/g", {2, 2}, {100, 200, 300, 400});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Allreduce" input: "cpu_0/g" input: "cpu_1/g" input: "cpu_2/g"
                            output: "cpu_0/g" output: "cpu_1/g" output: "cpu_2/g")"));
  for (const char* blob : {"cpu_0/g", "cpu_1/g", "cpu_2/g"}) {
    EXPECT_EQ(Fetch<float>(ws, blob), (std::vector<float>{111, 222, 333, 444})) << blob;
  }
}

TEST(AllreduceTest, AverageDividesByTheNumberOfDevices) {
  Workspace ws;
  Feed<float>(&ws, "a", {3}, {1, 2, 3});
  Feed<float>(&ws, "b", {3}, {3, 4, 5});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Allreduce" input: "a" input: "b" output: "a" output: "b"
                            arg { name: "average" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "a"), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(Fetch<float>(ws, "b"), (std::vector<float>{2, 3, 4}));
}

TEST(AllreduceTest, LargeBuffersReduceAcrossThreads) {
  Workspace ws;
  const int n = 1 << 18;  // above the elementwise parallel threshold
  Feed<float>(&ws, "a", {n}, std::vector<float>(n, 1.5f));
  Feed<float>(&ws, "b", {n}, std::vector<float>(n, 2.5f));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Allreduce" input: "a" input: "b" output: "a" output: "b")"));
  EXPECT_EQ(Fetch<float>(ws, "b"), std::vector<float>(n, 4.f));
}

TEST(AllreduceTest, InputsAddPairwiseSoTwoProcessesOfTwoDevicesAddAsOneProcessOfFour) {
  // 2^24 + 1 rounds back to 2^24: in input order ((a + b) + c) + d gives 0, pairwise
  // (a + b) + (c + d) gives 1, as two processes adding their devices' sums (a + b), (c + d) do.
  const float big = 16777216.f;
  ASSERT_EQ(((big + 1.f) + 1.f) - big, 0.f);
  Workspace ws;
  Feed<float>(&ws, "a", {2}, {big, big});
  Feed<float>(&ws, "b", {2}, {1, 1});
  Feed<float>(&ws, "c", {2}, {1, 1});
  Feed<float>(&ws, "d", {2}, {-big, -big});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Allreduce" input: "a" input: "b" input: "c" input: "d"
                            output: "a" output: "b" output: "c" output: "d"
                            arg { name: "average" i: 1 })"));
  const float two_processes = ((big + 1.f) * 0.5f + (1.f - big) * 0.5f) * 0.5f;
  EXPECT_EQ(two_processes, 0.25f);
  for (const char* blob : {"a", "b", "c", "d"}) {
    EXPECT_EQ(Fetch<float>(ws, blob), (std::vector<float>{two_processes, two_processes})) << blob;
  }
}

TEST(PairwiseSumTest, AddsAdjacentRanksFirstAndCarriesTheOddOneUp) {
  const std::vector<float> x = {1.5f, -2.25f, 3.125f, 1e7f, -1e7f, 0.0625f, 7.f};
  auto sum = [&](int n) { return PairwiseSum(n, [&](int r) { return x[r]; }); };
  const float a = x[0], b = x[1], c = x[2], d = x[3], e = x[4], f = x[5], g = x[6];
  EXPECT_EQ(sum(1), a);
  EXPECT_EQ(sum(3), (a + b) + c);
  EXPECT_EQ(sum(4), (a + b) + (c + d));
  EXPECT_EQ(sum(5), ((a + b) + (c + d)) + e);
  EXPECT_EQ(sum(6), ((a + b) + (c + d)) + (e + f));
  EXPECT_EQ(sum(7), ((a + b) + (c + d)) + ((e + f) + g));
}

TEST(PairwiseSumTest, RowsAddEachElementAsTheScalarSumDoes) {
  std::mt19937 rng(7);  // seed 7
  std::uniform_real_distribution<float> value(-1e4f, 1e4f);
  const int64_t count = 3 * 128 + 5;  // whole blocks and a partial one
  for (int n = 1; n <= 40; ++n) {
    std::vector<std::vector<float>> rows(n, std::vector<float>(count));
    std::vector<const float*> pointers;
    for (auto& row : rows) {
      for (float& v : row) v = value(rng);
      pointers.push_back(row.data());
    }
    std::vector<float> out(count);
    PairwiseSumRows(pointers.data(), n, 1, count, out.data());  // element 0 untouched
    EXPECT_EQ(out[0], 0.f);
    for (int64_t k = 1; k < count; ++k) {
      ASSERT_EQ(out[k], PairwiseSum(n, [&](int r) { return rows[r][k]; }))
          << n << " rows, element " << k;
    }
  }
}

TEST(AllreduceTest, ShapeMismatchNamesTheBlob) {
  Workspace ws;
  Feed<float>(&ws, "a", {3}, {1, 2, 3});
  Feed<float>(&ws, "b", {2}, {1, 2});
  EXPECT_NE(RunOpError(&ws, R"(type: "Allreduce" input: "a" input: "b" output: "a" output: "b")")
                .find("'b'"),
            std::string::npos);
}

// Across processes is ProcessAllreduce's job: `processes` is refused, not ignored (ignoring it
// would leave the blobs unreduced across the processes).
TEST(AllreduceTest, ProcessesIsRefusedNamingProcessAllreduce) {
  Workspace ws;
  Feed<float>(&ws, "a", {2}, {1, 2});
  const std::string error = RunOpError(
      &ws, R"(type: "Allreduce" input: "a" output: "a" arg { name: "processes" i: 1 })");
  EXPECT_NE(error.find("Allreduce reduces this process's devices only; across processes, "
                       "ProcessAllreduce takes the same tensors"),
            std::string::npos)
      << error;
}

TEST(AllreduceTest, SchemaIsACollectiveThatMustRunInPlace) {
  const OpSchema* schema = FindSchema("Allreduce");
  ASSERT_NE(schema, nullptr);
  EXPECT_TRUE(schema->is_collective());
  EXPECT_NE(schema->Verify(ParseOp(R"(type: "Allreduce" input: "a" input: "b" output: "a"
                                      output: "c")")),
            "");
}

}  // namespace
}  // namespace braid::test
