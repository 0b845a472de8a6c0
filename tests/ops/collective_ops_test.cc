// Allreduce (ops/collective): every input becomes the sum or mean over all inputs, in place.
#include <gtest/gtest.h>

#include <vector>

#include "ops/op_test_util.h"
#include "runtime/op_schema.h"

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

TEST(AllreduceTest, ShapeMismatchNamesTheBlob) {
  Workspace ws;
  Feed<float>(&ws, "a", {3}, {1, 2, 3});
  Feed<float>(&ws, "b", {2}, {1, 2});
  EXPECT_NE(RunOpError(&ws, R"(type: "Allreduce" input: "a" input: "b" output: "a" output: "b")")
                .find("'b'"),
            std::string::npos);
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
