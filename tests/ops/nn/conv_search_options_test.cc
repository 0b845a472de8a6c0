// ConvSearchOptions (ops/nn/conv_search_options.h): Caffe2's cuDNN hints as the CUDA convolution
// reads them, and the workspace limit of its algorithm search.
#include "ops/nn/conv_search_options.h"

#include <gtest/gtest.h>

#include <string>

#include "braid/status.h"
#include "ops/op_test_util.h"

namespace braid::test {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(ConvSearchOptionsTest, WithoutHintsASearchIsTimedWithinOneGiB) {
  const ConvSearchOptions o =
      ConvSearchOptionsOf(ParseOp(R"(type: "Conv" input: "X" input: "W" output: "Y")"));
  EXPECT_TRUE(o.timed);
  EXPECT_FALSE(o.deterministic);  // every algorithm competes, as in Caffe2 and PyTorch
  EXPECT_EQ(o.workspace_limit, kGiB);
}

TEST(ConvSearchOptionsTest, DeterministicAsksForAlgorithmsWithoutAtomics) {
  EXPECT_TRUE(ConvSearchOptionsOf(ParseOp(R"(type: "ConvGradient" input: "X" input: "W"
      input: "dY" output: "dW" arg { name: "deterministic" i: 1 })"))
                  .deterministic);
  EXPECT_FALSE(ConvSearchOptionsOf(ParseOp(R"(type: "Conv" input: "X" input: "W" output: "Y"
      arg { name: "deterministic" i: 0 })"))
                   .deterministic);
}

TEST(ConvSearchOptionsTest, CaffesHintsChooseTheHeuristicAndTheLimit) {
  ConvSearchOptions o = ConvSearchOptionsOf(ParseOp(R"(type: "ConvGradient" input: "X"
      input: "W" input: "dY" output: "dW" arg { name: "exhaustive_search" i: 0 }
      arg { name: "ws_nbytes_limit" i: 67108864 })"));
  EXPECT_FALSE(o.timed);
  EXPECT_EQ(o.workspace_limit, 64 << 20);
  o = ConvSearchOptionsOf(ParseOp(R"(type: "Conv" input: "X" input: "W" output: "Y"
      arg { name: "exhaustive_search" i: 1 } arg { name: "ws_nbytes_limit" i: 0 })"));
  EXPECT_TRUE(o.timed);
  EXPECT_EQ(o.workspace_limit, 0);
}

TEST(ConvSearchOptionsTest, ANegativeLimitIsRefusedNamingTheOp) {
  try {
    ConvSearchOptionsOf(ParseOp(R"(type: "Conv" input: "X" input: "W" output: "conv1"
        arg { name: "ws_nbytes_limit" i: -1 })"));
    ADD_FAILURE() << "a negative ws_nbytes_limit was accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("Conv 'conv1': ws_nbytes_limit must be >= 0"),
              std::string::npos)
        << e.status().message();
  }
}

// Before the cap, the first timed search would have sized its workspace by what the device had
// beyond the allocator's reserve (~74 GiB of an idle 80 GiB GPU, by arithmetic: no GPU has run
// this); the cap holds it to the op's limit, and a nearly full device to what it has.
TEST(ConvSearchOptionsTest, TheWorkspaceLimitIsTheCapOrWhatTheDeviceCanGiveIfLess) {
  EXPECT_EQ(ConvWorkspaceLimit(74 * kGiB, kGiB), kGiB);
  EXPECT_EQ(ConvWorkspaceLimit(300 << 20, kGiB), 300 << 20);
  EXPECT_EQ(ConvWorkspaceLimit(0, kGiB), 0);
  EXPECT_EQ(ConvWorkspaceLimit(-1, kGiB), kGiB);  // a device that cannot tell
  EXPECT_EQ(ConvWorkspaceLimit(74 * kGiB, 8 * kGiB), 8 * kGiB);
}

}  // namespace
}  // namespace braid::test
