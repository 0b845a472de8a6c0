#include "planner/dataflow.h"

#include <gtest/gtest.h>

#include "testing/net_text.h"

namespace braid {
namespace {

using ::braid::testing::NetFromText;
using Parents = std::vector<std::vector<int>>;

TEST(DataflowTest, ChainHasReadAfterWriteEdges) {
  DataflowGraph g = BuildDataflow(NetFromText(R"(
    op { type: "Relu" input: "x" output: "a" }
    op { type: "Relu" input: "a" output: "b" }
    op { type: "Relu" input: "b" output: "c" })"));
  EXPECT_EQ(g.parents, (Parents{{}, {0}, {1}}));
  EXPECT_EQ(g.children, (Parents{{1}, {2}, {}}));
}

TEST(DataflowTest, IndependentReadersOfOneBlobAreUnordered) {
  DataflowGraph g = BuildDataflow(NetFromText(R"(
    op { type: "Relu" input: "x" output: "a" }
    op { type: "Relu" input: "a" output: "b" }
    op { type: "Relu" input: "a" output: "c" }
    op { type: "Sum" input: "b" input: "c" output: "d" })"));
  EXPECT_EQ(g.parents, (Parents{{}, {0}, {0}, {1, 2}}));
}

TEST(DataflowTest, OverwriteWaitsForEarlierReaders) {
  // Op 2 rewrites "a": it must wait for op 1 (write-after-read) and op 0 (write-after-write).
  DataflowGraph g = BuildDataflow(NetFromText(R"(
    op { type: "Relu" input: "x" output: "a" }
    op { type: "Relu" input: "a" output: "b" }
    op { type: "Relu" input: "y" output: "a" }
    op { type: "Relu" input: "a" output: "c" })"));
  EXPECT_EQ(g.parents, (Parents{{}, {0}, {0, 1}, {2}}));
}

TEST(DataflowTest, ChainOfInPlaceOpsIsSerial) {
  DataflowGraph g = BuildDataflow(NetFromText(R"(
    op { type: "Relu" input: "x" output: "a" }
    op { type: "Relu" input: "a" output: "r" }
    op { type: "Relu" input: "a" output: "a" }
    op { type: "Relu" input: "a" output: "a" }
    op { type: "Relu" input: "a" output: "z" })"));
  // Op 2 writes "a" in place after op 1 read it; op 3 follows op 2; op 4 reads op 3's version.
  EXPECT_EQ(g.parents, (Parents{{}, {0}, {0, 1}, {2}, {3}}));
}

TEST(DataflowTest, InPlaceOpDoesNotDependOnItself) {
  DataflowGraph g = BuildDataflow(NetFromText(R"(
    op { type: "Relu" input: "a" output: "a" })"));
  EXPECT_EQ(g.parents, (Parents{{}}));
}

TEST(DataflowTest, ControlInputWaitsForProducerWithoutReading) {
  DataflowGraph g = BuildDataflow(NetFromText(R"(
    op { type: "Relu" input: "x" output: "a" }
    op { type: "Relu" input: "y" output: "b" }
    op { type: "Relu" input: "y" output: "c" control_input: "a" }
    op { type: "Relu" input: "x" output: "a" })"));
  EXPECT_EQ(g.parents[2], (std::vector<int>{0}));
  // A control input is not a read: rewriting "a" does not wait for op 2.
  EXPECT_EQ(g.parents[3], (std::vector<int>{0}));
}

TEST(DataflowTest, ExternalInputsAddNoEdges) {
  DataflowGraph g = BuildDataflow(NetFromText(R"(
    op { type: "Relu" input: "w" output: "a" }
    op { type: "Relu" input: "w" output: "b" })"));
  EXPECT_EQ(g.parents, (Parents{{}, {}}));
}

TEST(DataflowTest, EdgesAreDeduplicatedAndPointForward) {
  DataflowGraph g = BuildDataflow(NetFromText(R"(
    op { type: "Split" input: "x" output: "a" output: "b" }
    op { type: "Sum" input: "a" input: "b" input: "a" output: "c" })"));
  EXPECT_EQ(g.parents[1], (std::vector<int>{0}));
  for (int j = 0; j < g.num_ops(); ++j) {
    for (int i : g.parents[j]) EXPECT_LT(i, j);
  }
}

}  // namespace
}  // namespace braid
