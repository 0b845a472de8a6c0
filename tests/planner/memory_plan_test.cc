// PlanMemory on hand-built graphs: what may share memory, what never does, and the bound.
#include "planner/memory_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "planner/lower_bound.h"
#include "planner/packing_problem.h"
#include "planner/renaming.h"
#include "planner/verify_plan.h"
#include "testing/net_text.h"

namespace braid {
namespace {

using ::braid::testing::NetFromText;

// Every blob `bytes`; Relu and Sum in place; the gradients as the test nets name them
// ("x_grad" of x, "x_grad_autosplit_k" a part): the planner itself knows no naming.
PlanRequest RequestFor(const NetDef& net, int64_t bytes = 1024) {
  PlanRequest request;
  for (const OperatorDef& op : net.op()) {
    for (const std::string& b : op.input()) request.blob_bytes[b] = bytes;
    for (const std::string& b : op.output()) {
      request.blob_bytes[b] = bytes;
      const size_t at = b.rfind("_grad");
      if (at != std::string::npos) request.gradients[b] = at + 5 == b.size() ? b.substr(0, at) : "";
    }
    request.inplace.emplace_back();
    if (op.type() == "Relu" || op.type() == "Sum") request.inplace.back().push_back({0, 0});
  }
  return request;
}

std::map<std::string, BlobOffset> Placements(const MemoryPlan& plan) {
  std::map<std::string, BlobOffset> out;
  for (const ArenaPlan& arena : plan.arenas) {
    for (const BlobOffset& b : arena.blobs) out[b.blob] = b;
  }
  return out;
}

bool Overlap(const BlobOffset& x, const BlobOffset& y) {
  return x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
}

MemoryPlan PlanAndVerify(const NetDef& net, const PlanRequest& request) {
  MemoryPlan plan = PlanMemory(net, request);
  EXPECT_EQ(VerifyMemoryPlan(net, request, plan), "");
  EXPECT_LE(plan.lower_bound_bytes(), plan.arena_bytes());
  EXPECT_LE(plan.arena_bytes(), plan.naive_bytes());
  return plan;
}

TEST(MemoryPlanTest, ChainReusesTheBlobTwoStepsBack) {
  NetDef net = NetFromText(R"(name: "chain" external_input: "x" external_output: "d"
    op { type: "Tanh" input: "x" output: "a" }
    op { type: "Tanh" input: "a" output: "b" }
    op { type: "Tanh" input: "b" output: "c" }
    op { type: "Tanh" input: "c" output: "d" })");
  MemoryPlan plan = PlanAndVerify(net, RequestFor(net));
  auto at = Placements(plan);
  ASSERT_EQ(at.size(), 3u);  // a, b, c; x and d are external
  EXPECT_EQ(at["a"].offset, at["c"].offset);
  EXPECT_FALSE(Overlap(at["a"], at["b"]));
  EXPECT_EQ(plan.arena_bytes(), 2048);
  EXPECT_EQ(plan.lower_bound_bytes(), 2048);
  EXPECT_EQ(plan.naive_bytes(), 3072);
}

// Two branches from x joined by Sum: a blob dead in one branch is never reused in the other, on
// dag; with the simple executor's listed order it may be.
constexpr char kBranches[] = R"(name: "branches" external_input: "x" external_output: "y"
    op { type: "Tanh" input: "x" output: "a1" }
    op { type: "Tanh" input: "a1" output: "a2" }
    op { type: "Tanh" input: "a2" output: "a3" }
    op { type: "Tanh" input: "x" output: "b1" }
    op { type: "Tanh" input: "b1" output: "b2" }
    op { type: "Tanh" input: "b2" output: "b3" }
    op { type: "Sum" input: "a3" input: "b3" output: "y" })";

TEST(MemoryPlanTest, BlobsOfParallelBranchesNeverShareOnDag) {
  NetDef net = NetFromText(kBranches);
  MemoryPlan plan = PlanAndVerify(net, RequestFor(net));
  auto at = Placements(plan);
  for (const char* a : {"a1", "a2", "a3"}) {
    for (const char* b : {"b1", "b2", "b3"}) {
      EXPECT_FALSE(Overlap(at[a], at[b])) << a << " and " << b;
    }
  }
  EXPECT_EQ(at["a1"].offset, at["a3"].offset);  // within a branch, reuse is fine
  EXPECT_EQ(plan.lower_bound_bytes(), 4096);    // a1, a2 alive while b1, b2 are
  EXPECT_EQ(plan.arena_bytes(), 4096);
}

TEST(MemoryPlanTest, SimpleExecutorReusesAcrossBranchesInListedOrder) {
  NetDef net = NetFromText(kBranches);
  PlanRequest request = RequestFor(net);
  request.executor = PlanExecutor::kSimple;
  MemoryPlan plan = PlanAndVerify(net, request);
  EXPECT_EQ(plan.arena_bytes(), 3072);  // a3 stays alive across branch b: a3, b_k, b_k+1
  EXPECT_EQ(plan.lower_bound_bytes(), 3072);
}

TEST(MemoryPlanTest, DiamondKeepsBothArmsApart) {
  NetDef net = NetFromText(R"(name: "diamond" external_input: "x" external_output: "y"
    op { type: "Tanh" input: "x" output: "s" }
    op { type: "Tanh" input: "s" output: "l" }
    op { type: "Sigmoid" input: "s" output: "r" }
    op { type: "Add" input: "l" input: "r" output: "j" }
    op { type: "Tanh" input: "j" output: "y" })");
  MemoryPlan plan = PlanAndVerify(net, RequestFor(net));
  auto at = Placements(plan);
  EXPECT_FALSE(Overlap(at["l"], at["r"]));
  EXPECT_FALSE(Overlap(at["s"], at["l"]));
  EXPECT_FALSE(Overlap(at["s"], at["r"]));
  EXPECT_EQ(plan.arena_bytes(), 3072);  // s, l and r may all be alive at once
}

TEST(MemoryPlanTest, ReluRunsInPlaceOverTheSumOutputItConsumes) {
  NetDef net = NetFromText(R"(name: "inplace" external_input: "x" external_input: "y"
    external_output: "out"
    op { type: "Sum" input: "x" input: "y" output: "s" }
    op { type: "Relu" input: "s" output: "r" }
    op { type: "Tanh" input: "r" output: "out" })");
  MemoryPlan plan = PlanAndVerify(net, RequestFor(net));
  auto at = Placements(plan);
  EXPECT_EQ(at["s"].offset, at["r"].offset);
  EXPECT_EQ(plan.arena_bytes(), 1024);
}

TEST(MemoryPlanTest, NoInPlaceWhenTheInputIsReadLater) {
  NetDef net = NetFromText(R"(name: "later_reader" external_input: "x" external_output: "out"
    op { type: "Tanh" input: "x" output: "s" }
    op { type: "Relu" input: "s" output: "r" }
    op { type: "Add" input: "r" input: "s" output: "out" })");
  MemoryPlan plan = PlanAndVerify(net, RequestFor(net));
  auto at = Placements(plan);
  EXPECT_FALSE(Overlap(at["s"], at["r"]));
}

TEST(MemoryPlanTest, NoInPlaceWhereTheSchemaDoesNotAllowIt) {
  NetDef net = NetFromText(R"(name: "no_pair" external_input: "x" external_output: "out"
    op { type: "Tanh" input: "x" output: "s" }
    op { type: "Tanh" input: "s" output: "r" }
    op { type: "Tanh" input: "r" output: "out" })");
  MemoryPlan plan = PlanAndVerify(net, RequestFor(net));  // Tanh has no in-place pair here
  auto at = Placements(plan);
  EXPECT_FALSE(Overlap(at["s"], at["r"]));
}

TEST(MemoryPlanTest, OneOutputInPlaceAndOneFresh) {
  // "Two" writes o0 in place over input 0 and o1 fresh.
  NetDef net = NetFromText(R"(name: "two_outputs" external_input: "x" external_output: "out"
    op { type: "Tanh" input: "x" output: "a" }
    op { type: "Two" input: "a" output: "o0" output: "o1" }
    op { type: "Add" input: "o0" input: "o1" output: "out" })");
  PlanRequest request = RequestFor(net);
  request.inplace[1] = {{0, 0}};
  MemoryPlan plan = PlanAndVerify(net, request);
  auto at = Placements(plan);
  EXPECT_EQ(at["a"].offset, at["o0"].offset);
  EXPECT_FALSE(Overlap(at["a"], at["o1"]));
  EXPECT_FALSE(Overlap(at["o0"], at["o1"]));
  EXPECT_EQ(plan.arena_bytes(), 2048);
}

TEST(MemoryPlanTest, RepeatedInPlaceOpsKeepOneBlob) {
  NetDef net = NetFromText(R"(name: "repeat" external_input: "x" external_output: "out"
    op { type: "Tanh" input: "x" output: "a" }
    op { type: "Relu" input: "a" output: "a" }
    op { type: "Relu" input: "a" output: "a" }
    op { type: "Tanh" input: "a" output: "b" }
    op { type: "Tanh" input: "b" output: "out" })");
  MemoryPlan plan = PlanAndVerify(net, RequestFor(net));
  auto at = Placements(plan);
  ASSERT_EQ(at.size(), 2u);
  EXPECT_FALSE(Overlap(at["a"], at["b"]));  // Tanh(a) -> b is not in place
}

TEST(MemoryPlanTest, ExternalsParametersAndUserNamedBlobsAreNeverRecycled) {
  NetDef net = NetFromText(R"(name: "keep" external_input: "x" external_output: "y"
    op { type: "FC" input: "x" input: "w" input: "bias" output: "h" }
    op { type: "Tanh" input: "h" output: "t" }
    op { type: "Tanh" input: "t" output: "u" }
    op { type: "Tanh" input: "u" output: "y" })");
  PlanRequest request = RequestFor(net);
  request.keep = {"t"};
  auto at = Placements(PlanAndVerify(net, request));
  EXPECT_EQ(at.size(), 2u);
  EXPECT_TRUE(at.count("h") && at.count("u"));  // x, y external; w, bias read first; t kept
}

TEST(MemoryPlanTest, AControlInputKeepsItsBlobAliveUntilItsOpRuns) {
  NetDef net = NetFromText(R"(name: "control" external_input: "x" external_output: "y"
    op { type: "Tanh" input: "x" output: "a" }
    op { type: "Tanh" input: "a" output: "b" }
    op { type: "Tanh" input: "b" output: "c" }
    op { type: "Tanh" input: "c" output: "y" control_input: "a" })");
  for (PlanExecutor executor : {PlanExecutor::kDag, PlanExecutor::kSimple}) {
    PlanRequest request = RequestFor(net);
    request.executor = executor;
    auto at = Placements(PlanAndVerify(net, request));
    ASSERT_TRUE(at.count("a") && at.count("b") && at.count("c"));
    EXPECT_FALSE(Overlap(at["a"], at["c"]));  // without the control input, c could take a's place
  }
}

// Forward, backward with a gradient accumulated from two readers, and an update.
constexpr char kTraining[] = R"(name: "train" external_input: "x"
    op { type: "FC" input: "x" input: "w" input: "b" output: "h" }
    op { type: "Relu" input: "h" output: "r" }
    op { type: "Tanh" input: "r" output: "t1" }
    op { type: "Sigmoid" input: "r" output: "t2" }
    op { type: "Add" input: "t1" input: "t2" output: "loss" }
    op { type: "ConstantFill" input: "loss" output: "loss_grad" }
    op { type: "TanhGradient" input: "t1" input: "loss_grad" output: "r_grad_autosplit_0" }
    op { type: "SigmoidGradient" input: "t2" input: "loss_grad" output: "r_grad_autosplit_1" }
    op { type: "Sum" input: "r_grad_autosplit_0" input: "r_grad_autosplit_1" output: "r_grad" }
    op { type: "ReluGradient" input: "r" input: "r_grad" output: "h_grad" }
    op { type: "FCGradient" input: "x" input: "w" input: "h_grad"
         output: "w_grad" output: "b_grad" output: "x_grad" }
    op { type: "WeightedSum" input: "w" input: "one" input: "w_grad" input: "lr" output: "w" })";

TEST(MemoryPlanTest, TrainingRecyclesGradientsButNotParameterGradients) {
  NetDef net = NetFromText(kTraining);
  PlanRequest request = RequestFor(net);
  request.mode = PlanMode::kTraining;
  auto at = Placements(PlanAndVerify(net, request));
  for (const char* grad :
       {"loss_grad", "r_grad_autosplit_0", "r_grad_autosplit_1", "r_grad", "h_grad"}) {
    EXPECT_TRUE(at.count(grad)) << grad;
  }
  // x_grad too: x is read before it is written, like a parameter.
  for (const char* kept : {"w_grad", "b_grad", "x_grad", "h", "r", "t1", "t2", "loss"}) {
    EXPECT_FALSE(at.count(kept)) << kept;
  }
  // Both autosplit parts are alive when Sum reads them; Sum may write r_grad over the first.
  EXPECT_FALSE(Overlap(at["r_grad_autosplit_0"], at["r_grad_autosplit_1"]));
  EXPECT_EQ(at["r_grad"].offset, at["r_grad_autosplit_0"].offset);
}

TEST(MemoryPlanTest, TrainingWithSharedActivationsRecyclesActivationsToo) {
  NetDef net = NetFromText(kTraining);
  PlanRequest request = RequestFor(net);
  request.mode = PlanMode::kTraining;
  request.share_activations = true;
  MemoryPlan plan = PlanAndVerify(net, request);
  auto at = Placements(plan);
  EXPECT_TRUE(at.count("h") && at.count("t1") && at.count("loss"));
  EXPECT_FALSE(at.count("w_grad"));
  EXPECT_LT(plan.arena_bytes(), plan.naive_bytes());
}

TEST(MemoryPlanTest, ParameterGradientsAreRecycledWhenAskedAndLiveUntilTheUpdate) {
  NetDef net = NetFromText(kTraining);
  PlanRequest request = RequestFor(net);
  request.mode = PlanMode::kTraining;
  request.share_parameter_gradients = true;
  auto at = Placements(PlanAndVerify(net, request));
  for (const char* grad : {"w_grad", "b_grad", "x_grad"}) EXPECT_TRUE(at.count(grad)) << grad;
  // FCGradient reads h_grad while it writes w_grad; WeightedSum reads w_grad last.
  EXPECT_FALSE(Overlap(at["w_grad"], at["h_grad"]));
  EXPECT_FALSE(Overlap(at["w_grad"], at["b_grad"]));
}

TEST(MemoryPlanTest, TreeWithTwoLossesSharesOnlyAfterBothHeadsRead) {
  NetDef net = NetFromText(R"(name: "tree" external_input: "x"
    external_output: "loss1" external_output: "loss2"
    op { type: "Tanh" input: "x" output: "trunk" }
    op { type: "Tanh" input: "trunk" output: "h1" }
    op { type: "Tanh" input: "h1" output: "loss1" }
    op { type: "Sigmoid" input: "trunk" output: "h2" }
    op { type: "Tanh" input: "h2" output: "loss2" })");
  auto at = Placements(PlanAndVerify(net, RequestFor(net)));
  EXPECT_FALSE(Overlap(at["trunk"], at["h1"]));
  EXPECT_FALSE(Overlap(at["trunk"], at["h2"]));
  EXPECT_FALSE(Overlap(at["h1"], at["h2"]));  // the heads are parallel
}

TEST(MemoryPlanTest, OneArenaPerDevice) {
  NetDef net = NetFromText(R"(name: "devices" external_input: "x" external_output: "y"
    op { type: "Tanh" input: "x" output: "a" device_option { device_id: 0 } }
    op { type: "Tanh" input: "a" output: "b" device_option { device_id: 1 } }
    op { type: "Tanh" input: "b" output: "c" device_option { device_id: 1 } }
    op { type: "Tanh" input: "c" output: "y" device_option { device_id: 0 } })");
  MemoryPlan plan = PlanAndVerify(net, RequestFor(net));
  ASSERT_EQ(plan.arenas.size(), 2u);
  EXPECT_EQ(plan.arenas[0].device.device_id(), 0);
  EXPECT_EQ(plan.arenas[1].device.device_id(), 1);
  EXPECT_EQ(plan.arenas[1].blobs.size(), 2u);  // b and c
}

TEST(MemoryPlanTest, SizesAreRoundedToTheAlignment) {
  NetDef net = NetFromText(R"(name: "align" external_input: "x" external_output: "y"
    op { type: "Tanh" input: "x" output: "a" }
    op { type: "Tanh" input: "a" output: "b" }
    op { type: "Tanh" input: "b" output: "y" })");
  PlanRequest request = RequestFor(net, 10);
  MemoryPlan plan = PlanAndVerify(net, request);
  for (const BlobOffset& b : plan.arenas.at(0).blobs) {
    EXPECT_EQ(b.bytes, 64);
    EXPECT_EQ(b.offset % 64, 0);
  }
}

TEST(MemoryPlanTest, RenamingPicksSharedNamesTheNetDoesNotUse) {
  NetDef net = NetFromText(R"(name: "taken" external_input: "__m0_shared" external_output: "d"
    op { type: "Tanh" input: "__m0_shared" output: "a" }
    op { type: "Tanh" input: "a" output: "b" }
    op { type: "Tanh" input: "b" output: "c" }
    op { type: "Tanh" input: "c" output: "d" })");
  NetDef renamed = RenameSharedBlobs(net, RequestFor(net));
  EXPECT_EQ(renamed.op(0).input(0), "__m0_shared");  // the external input keeps its name
  EXPECT_EQ(renamed.op(0).output(0), "__m1_shared");  // a and c share a fresh name
  EXPECT_EQ(renamed.op(2).output(0), "__m1_shared");
  EXPECT_EQ(VerifyRenamedNet(net, renamed), "");
}

}  // namespace
}  // namespace braid
