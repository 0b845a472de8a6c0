#include "planner/verify_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "planner/op_seed.h"
#include "testing/net_text.h"

namespace braid {
namespace {

using ::braid::testing::NetFromText;

// Passes when `error` contains `part`; prints the whole message otherwise.
::testing::AssertionResult Mentions(const std::string& error, const std::string& part) {
  if (error.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << error << "' does not mention '" << part << "'";
}

PlanRequest RequestFor(const std::map<std::string, int64_t>& bytes,
                       PlanExecutor executor = PlanExecutor::kDag) {
  PlanRequest request;
  request.blob_bytes = bytes;
  request.executor = executor;
  request.alignment = 64;
  return request;
}

MemoryPlan OneCpuArena(const std::vector<BlobOffset>& blobs, int64_t arena_bytes) {
  MemoryPlan plan;
  plan.arenas.emplace_back();
  plan.arenas[0].blobs = blobs;
  plan.arenas[0].arena_bytes = arena_bytes;
  return plan;
}

// x -> a -> b -> c -> y.
NetDef Chain() {
  return NetFromText(R"(
    name: "chain" external_input: "x" external_output: "y"
    op { type: "Relu" input: "x" output: "a" }
    op { type: "Relu" input: "a" output: "b" }
    op { type: "Relu" input: "b" output: "c" }
    op { type: "Relu" input: "c" output: "y" })");
}

// Relu a -> b, which the schema may run in place, between two other ops.
NetDef ReluBetween(const std::string& last_op) {
  return NetFromText(R"(
    name: "inplace" external_input: "x" external_output: "y"
    op { type: "Relu" input: "x" output: "a" }
    op { type: "Relu" input: "a" output: "b" }
    )" + last_op);
}

PlanRequest ReluInPlaceRequest(std::vector<std::pair<int, int>> relu_pairs = {{0, 0}}) {
  PlanRequest request = RequestFor({{"a", 64}, {"b", 64}});
  request.inplace = {{}, relu_pairs, {}};
  return request;
}

// Two branches x -> a1 -> a2 and x -> b1 -> b2 that only meet at the final Sum.
NetDef TwoBranches() {
  return NetFromText(R"(
    name: "branches" external_input: "x" external_output: "y"
    op { type: "Relu" input: "x" output: "a1" }
    op { type: "Relu" input: "a1" output: "a2" }
    op { type: "Relu" input: "x" output: "b1" }
    op { type: "Relu" input: "b1" output: "b2" }
    op { type: "Sum" input: "a2" input: "b2" output: "y" })");
}

TEST(VerifyMemoryPlanTest, AcceptsChainReusingDeadBlobs) {
  const PlanRequest request = RequestFor({{"a", 64}, {"b", 64}, {"c", 64}});
  const MemoryPlan plan = OneCpuArena({{"a", 0, 64}, {"b", 64, 64}, {"c", 0, 64}}, 128);
  EXPECT_EQ(VerifyMemoryPlan(Chain(), request, plan), "");
}

TEST(VerifyMemoryPlanTest, AcceptsEmptyPlan) {
  EXPECT_EQ(VerifyMemoryPlan(Chain(), RequestFor({}), MemoryPlan{}), "");
}

TEST(VerifyMemoryPlanTest, RejectsNeighboursInChainSharingMemory) {
  const PlanRequest request = RequestFor({{"a", 64}, {"b", 64}});
  const MemoryPlan plan = OneCpuArena({{"a", 0, 64}, {"b", 0, 64}}, 64);
  EXPECT_NE(VerifyMemoryPlan(Chain(), request, plan), "");
}

TEST(VerifyMemoryPlanTest, AcceptsLegalInPlaceRelu) {
  const NetDef net = ReluBetween(R"(op { type: "Relu" input: "b" output: "y" })");
  const MemoryPlan plan = OneCpuArena({{"a", 0, 64}, {"b", 0, 64}}, 64);
  EXPECT_EQ(VerifyMemoryPlan(net, ReluInPlaceRequest(), plan), "");
}

TEST(VerifyMemoryPlanTest, RejectsInPlaceTheSchemaDoesNotAllow) {
  const NetDef net = ReluBetween(R"(op { type: "Relu" input: "b" output: "y" })");
  const MemoryPlan plan = OneCpuArena({{"a", 0, 64}, {"b", 0, 64}}, 64);
  EXPECT_NE(VerifyMemoryPlan(net, ReluInPlaceRequest({}), plan), "");
  EXPECT_NE(VerifyMemoryPlan(net, ReluInPlaceRequest({{0, 1}}), plan), "");
  EXPECT_NE(VerifyMemoryPlan(net, ReluInPlaceRequest({{1, 0}}), plan), "");
}

TEST(VerifyMemoryPlanTest, RejectsInPlaceWhenInputHasLaterReader) {
  const NetDef net = ReluBetween(R"(op { type: "Sum" input: "a" input: "b" output: "y" })");
  const MemoryPlan plan = OneCpuArena({{"a", 0, 64}, {"b", 0, 64}}, 64);
  EXPECT_NE(VerifyMemoryPlan(net, ReluInPlaceRequest(), plan), "");
}

TEST(VerifyMemoryPlanTest, RejectsInPlaceAtUnequalOffsets) {
  const NetDef net = ReluBetween(R"(op { type: "Relu" input: "b" output: "y" })");
  PlanRequest request = ReluInPlaceRequest();
  request.blob_bytes = {{"a", 128}, {"b", 128}};
  const MemoryPlan plan = OneCpuArena({{"a", 0, 128}, {"b", 64, 128}}, 192);
  EXPECT_NE(VerifyMemoryPlan(net, request, plan), "");
}

TEST(VerifyMemoryPlanTest, RejectsParallelBranchesSharingMemoryUnderDag) {
  // a1 is dead once a2 is written, but nothing orders that before b2's write in the other branch.
  const MemoryPlan plan =
      OneCpuArena({{"a1", 0, 64}, {"a2", 64, 64}, {"b1", 128, 64}, {"b2", 0, 64}}, 192);
  const std::map<std::string, int64_t> bytes = {{"a1", 64}, {"a2", 64}, {"b1", 64}, {"b2", 64}};
  const std::string error = VerifyMemoryPlan(TwoBranches(), RequestFor(bytes), plan);
  EXPECT_TRUE(Mentions(error, "net 'branches'"));
  EXPECT_TRUE(Mentions(error, "'a1' [0, 64)"));
  EXPECT_TRUE(Mentions(error, "'b2' [0, 64)"));
  EXPECT_TRUE(Mentions(error, "op 0 (Relu) touching 'a1'"));
  EXPECT_TRUE(Mentions(error, "op 3 (Relu) writing 'b2'"));
}

TEST(VerifyMemoryPlanTest, AcceptsBranchesSharingMemoryInSimpleListedOrder) {
  const MemoryPlan plan =
      OneCpuArena({{"a1", 0, 64}, {"a2", 64, 64}, {"b1", 128, 64}, {"b2", 0, 64}}, 192);
  const std::map<std::string, int64_t> bytes = {{"a1", 64}, {"a2", 64}, {"b1", 64}, {"b2", 64}};
  EXPECT_EQ(VerifyMemoryPlan(TwoBranches(), RequestFor(bytes, PlanExecutor::kSimple), plan), "");
}

TEST(VerifyMemoryPlanTest, RejectsOverlapWithBlobStillReadLater) {
  const NetDef net = NetFromText(R"(
    name: "late_read" external_input: "x" external_output: "y"
    op { type: "Relu" input: "x" output: "a" }
    op { type: "Relu" input: "a" output: "b" }
    op { type: "Relu" input: "b" output: "c" }
    op { type: "Sum" input: "a" input: "c" output: "y" })");
  const PlanRequest request = RequestFor({{"a", 64}, {"b", 64}, {"c", 64}});
  const MemoryPlan plan = OneCpuArena({{"a", 0, 64}, {"b", 64, 64}, {"c", 0, 64}}, 128);
  EXPECT_NE(VerifyMemoryPlan(net, request, plan), "");
}

TEST(VerifyMemoryPlanTest, RejectsRecycledExternalOutput) {
  const PlanRequest request = RequestFor({{"c", 64}, {"y", 64}});
  const std::string error =
      VerifyMemoryPlan(Chain(), request, OneCpuArena({{"c", 0, 64}, {"y", 64, 64}}, 128));
  EXPECT_TRUE(Mentions(error, "external output"));
}

TEST(VerifyMemoryPlanTest, RejectsRecycledParameterReadBeforeWritten) {
  const NetDef net = NetFromText(R"(
    name: "sgd" external_input: "x"
    op { type: "FC" input: "x" input: "w" output: "a" }
    op { type: "Relu" input: "a" output: "w" })");
  const std::string error = VerifyMemoryPlan(net, RequestFor({{"a", 64}, {"w", 64}}),
                                             OneCpuArena({{"a", 0, 64}, {"w", 64, 64}}, 128));
  EXPECT_TRUE(Mentions(error, "'w'"));
  EXPECT_TRUE(Mentions(error, "read before it is written"));
}

TEST(VerifyMemoryPlanTest, RejectsRecycledKeptOrUnsizedBlob) {
  PlanRequest request = RequestFor({{"a", 64}});
  request.keep = {"a"};
  EXPECT_NE(VerifyMemoryPlan(Chain(), request, OneCpuArena({{"a", 0, 64}}, 64)), "");
  EXPECT_NE(VerifyMemoryPlan(Chain(), RequestFor({}), OneCpuArena({{"a", 0, 64}}, 64)), "");
}

TEST(VerifyMemoryPlanTest, RejectsActivationInTrainingWithoutSharedActivations) {
  PlanRequest request = RequestFor({{"a", 64}});
  request.mode = PlanMode::kTraining;
  EXPECT_NE(VerifyMemoryPlan(Chain(), request, OneCpuArena({{"a", 0, 64}}, 64)), "");
  request.share_activations = true;
  EXPECT_EQ(VerifyMemoryPlan(Chain(), request, OneCpuArena({{"a", 0, 64}}, 64)), "");
}

TEST(VerifyMemoryPlanTest, RejectsParameterGradientUnlessParameterGradientsAreShared) {
  const NetDef net = NetFromText(R"(
    name: "sgd" external_input: "x"
    op { type: "FC" input: "x" input: "w" output: "a" }
    op { type: "FCGradient" input: "x" input: "w" input: "a" output: "w_grad" }
    op { type: "WeightedSum" input: "w" input: "w_grad" output: "w" })");
  PlanRequest request = RequestFor({{"w_grad", 64}});
  request.mode = PlanMode::kTraining;
  request.gradients = {{"w_grad", "w"}};
  const MemoryPlan plan = OneCpuArena({{"w_grad", 0, 64}}, 64);
  EXPECT_TRUE(Mentions(VerifyMemoryPlan(net, request, plan), "a parameter's gradient"));
  request.share_parameter_gradients = true;
  EXPECT_EQ(VerifyMemoryPlan(net, request, plan), "");
}

TEST(VerifyMemoryPlanTest, RejectsMisalignedOffset) {
  const PlanRequest request = RequestFor({{"a", 64}, {"c", 64}});
  const std::string error =
      VerifyMemoryPlan(Chain(), request, OneCpuArena({{"a", 0, 64}, {"c", 96, 64}}, 192));
  EXPECT_TRUE(Mentions(error, "aligned"));
}

TEST(VerifyMemoryPlanTest, RejectsPlacementPastArenaEnd) {
  const PlanRequest request = RequestFor({{"a", 64}, {"b", 64}});
  const std::string error =
      VerifyMemoryPlan(Chain(), request, OneCpuArena({{"a", 0, 64}, {"b", 64, 64}}, 64));
  EXPECT_TRUE(Mentions(error, "past the arena"));
}

TEST(VerifyMemoryPlanTest, RejectsPlacementSmallerThanBlob) {
  const PlanRequest request = RequestFor({{"a", 128}});
  EXPECT_NE(VerifyMemoryPlan(Chain(), request, OneCpuArena({{"a", 0, 64}}, 64)), "");
}

TEST(VerifyMemoryPlanTest, RejectsBlobPlacedTwice) {
  MemoryPlan plan = OneCpuArena({{"a", 0, 64}}, 64);
  plan.arenas.push_back(plan.arenas[0]);
  EXPECT_TRUE(Mentions(VerifyMemoryPlan(Chain(), RequestFor({{"a", 64}}), plan), "more than once"));
}

TEST(VerifyMemoryPlanTest, RejectsBlobInArenaOfOtherDevice) {
  const NetDef net = NetFromText(R"(
    name: "two_devices" external_input: "x" external_output: "y"
    op { type: "Relu" input: "x" output: "a" device_option { device_type: 1 device_id: 0 } }
    op { type: "Relu" input: "a" output: "y" device_option { device_type: 1 device_id: 0 } })");
  MemoryPlan plan = OneCpuArena({{"a", 0, 64}}, 64);
  EXPECT_TRUE(Mentions(VerifyMemoryPlan(net, RequestFor({{"a", 64}}), plan), "device"));
  plan.arenas[0].device.set_device_type(1);
  EXPECT_EQ(VerifyMemoryPlan(net, RequestFor({{"a", 64}}), plan), "");
}

TEST(VerifyMemoryPlanTest, AcceptsOverlapAcrossArenas) {
  // Separate arenas are separate allocations: equal offsets there share no byte.
  MemoryPlan plan = OneCpuArena({{"a", 0, 64}}, 64);
  plan.arenas.push_back(plan.arenas[0]);
  plan.arenas[1].blobs = {{"b", 0, 64}};
  EXPECT_EQ(VerifyMemoryPlan(Chain(), RequestFor({{"a", 64}, {"b", 64}}), plan), "");
}

TEST(VerifyRenamedNetTest, AcceptsIdentityRenaming) {
  EXPECT_EQ(VerifyRenamedNet(Chain(), Chain()), "");
  EXPECT_EQ(VerifyRenamedNet(TwoBranches(), TwoBranches()), "");
}

TEST(VerifyRenamedNetTest, AcceptsChainReusingDeadName) {
  NetDef renamed = Chain();
  renamed.mutable_op(2)->set_output(0, "a");  // c lives where a, dead by then, lived
  renamed.mutable_op(3)->set_input(0, "a");
  // The renamed op's default seed (a hash of its output's name) changed: unpinned, it is refused.
  EXPECT_TRUE(Mentions(VerifyRenamedNet(Chain(), renamed), "random seed"));
  Argument* seed = renamed.mutable_op(2)->add_arg();
  seed->set_name("seed");
  seed->set_i(static_cast<int64_t>(OpSeed(Chain().op(2))));
  EXPECT_EQ(VerifyRenamedNet(Chain(), renamed), "");
}

TEST(VerifyRenamedNetTest, RejectsReaderSeeingAnotherProducer) {
  const NetDef original = NetFromText(R"(
    name: "late_read" external_input: "x" external_output: "y"
    op { type: "Relu" input: "x" output: "a" }
    op { type: "Relu" input: "a" output: "b" }
    op { type: "Relu" input: "b" output: "c" }
    op { type: "Sum" input: "a" input: "c" output: "y" })");
  NetDef renamed = original;
  renamed.mutable_op(2)->set_output(0, "a");  // overwrites a before op 3 reads it
  renamed.mutable_op(3)->set_input(1, "a");
  EXPECT_TRUE(Mentions(VerifyRenamedNet(original, renamed), "op 3 (Sum) read 0"));
}

TEST(VerifyRenamedNetTest, RejectsOrderingAddedBetweenParallelBranches) {
  NetDef renamed = TwoBranches();
  renamed.mutable_op(3)->set_output(0, "a1");  // b2 in a1's name: waits for op 1's read
  renamed.mutable_op(4)->set_input(1, "a1");
  EXPECT_TRUE(Mentions(VerifyRenamedNet(TwoBranches(), renamed),
                       "op 0 (Relu) happens before op 3 (Relu) in the renamed net"));
}

TEST(VerifyRenamedNetTest, RejectsTwoOutputsOfOneOpSharingAName) {
  const NetDef original = NetFromText(R"(
    name: "split" external_input: "x" external_output: "y"
    op { type: "Split" input: "x" output: "a" output: "b" }
    op { type: "Sum" input: "a" input: "b" output: "y" })");
  NetDef renamed = original;
  renamed.mutable_op(0)->set_output(1, "a");
  renamed.mutable_op(1)->set_input(1, "a");
  EXPECT_NE(VerifyRenamedNet(original, renamed), "");
}

TEST(VerifyRenamedNetTest, RejectsRenamingOntoStateOrChangedOps) {
  NetDef onto_input = Chain();
  onto_input.mutable_op(2)->set_output(0, "x");  // clobbers the external input
  onto_input.mutable_op(3)->set_input(0, "x");
  EXPECT_TRUE(Mentions(VerifyRenamedNet(Chain(), onto_input), "'x'"));
  NetDef other_type = Chain();
  other_type.mutable_op(1)->set_type("Sigmoid");
  EXPECT_TRUE(Mentions(VerifyRenamedNet(Chain(), other_type), "type"));
  NetDef other_output = Chain();
  other_output.set_external_output(0, "c");
  EXPECT_NE(VerifyRenamedNet(Chain(), other_output), "");
}

}  // namespace
}  // namespace braid
