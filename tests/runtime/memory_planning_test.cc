// Planning a built net's memory in a workspace: same bits as unplanned, nothing allocated per run.
#include "runtime/memory_planning.h"

#include <gtest/gtest.h>

#include <set>

#include "planner/renaming.h"
#include "planner/reorder.h"
#include "runtime/allocator.h"
#include "runtime/net.h"
#include "runtime/status.h"
#include "runtime/workspace.h"
#include "testing/net_text.h"
#include "tools/stress/random_net.h"

namespace braid {
namespace {

NetDef Mlp(const std::string& type) {
  NetDef net = testing::NetFromText(R"(name: "mlp" external_output: "out"
    op { type: "GaussianFill" output: "x" arg { name: "shape" ints: 8 ints: 32 }
         arg { name: "seed" i: 1 } }
    op { type: "GaussianFill" output: "w1" arg { name: "shape" ints: 64 ints: 32 }
         arg { name: "seed" i: 2 } }
    op { type: "ConstantFill" output: "b1" arg { name: "shape" ints: 64 } arg { name: "value" f: 0.1 } }
    op { type: "FC" input: "x" input: "w1" input: "b1" output: "h1" }
    op { type: "Relu" input: "h1" output: "r1" }
    op { type: "Tanh" input: "r1" output: "t1" }
    op { type: "Sigmoid" input: "r1" output: "s1" }
    op { type: "Add" input: "t1" input: "s1" output: "j" }
    op { type: "Relu" input: "j" output: "out" })");
  net.set_type(type);
  return net;
}

std::string Bytes(const Workspace& ws, const std::string& blob) {
  const Tensor* t = ws.GetBlob(blob);
  return std::string(static_cast<const char*>(t->raw_data()), t->nbytes());
}

TEST(MemoryPlanningTest, PlannedNetComputesTheSameBitsAsUnplanned) {
  Workspace plain_ws;
  ASSERT_TRUE(plain_ws.CreateNet(Mlp("simple"))->Run().ok());
  for (const char* type : {"simple", "dag"}) {
    Workspace ws;
    Net* net = ws.CreateNet(Mlp(type));
    MemoryPlanOptions options;
    options.verify = true;
    options.poison = true;
    std::unique_ptr<NetMemory> memory = PlanNetMemory(*net, &ws, options);
    EXPECT_LT(memory->plan().arena_bytes(), memory->plan().naive_bytes()) << type;
    ASSERT_TRUE(net->Run().ok());
    EXPECT_EQ(Bytes(ws, "out"), Bytes(plain_ws, "out")) << type;
  }
}

TEST(MemoryPlanningTest, PlannedBlobsAreViewsIntoTheArena) {
  Workspace ws;
  Net* net = ws.CreateNet(Mlp("dag"));
  std::unique_ptr<NetMemory> memory = PlanNetMemory(*net, &ws, {});
  ASSERT_EQ(memory->plan().arenas.size(), 1u);
  const char* base = static_cast<const char*>(memory->arena(0).get());
  for (const BlobOffset& b : memory->plan().arenas[0].blobs) {
    const Tensor* t = ws.GetBlob(b.blob);
    ASSERT_TRUE(t->storage() && t->storage()->is_view()) << b.blob;
    EXPECT_EQ(static_cast<const char*>(t->storage()->data()), base + b.offset) << b.blob;
  }
  EXPECT_FALSE(ws.GetBlob("out")->storage() && ws.GetBlob("out")->storage()->is_view());
}

TEST(MemoryPlanningTest, SteadyStateRunsAllocateNothing) {
  Workspace ws;
  Net* net = ws.CreateNet(Mlp("dag"));
  std::unique_ptr<NetMemory> memory = PlanNetMemory(*net, &ws, {});
  ASSERT_TRUE(net->Run().ok());
  const int64_t allocations = CpuAllocator()->stats().allocations;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(CpuAllocator()->stats().allocations, allocations);
}

TEST(MemoryPlanningTest, TensorsKeepTheArenaAliveAfterThePlanIsDropped) {
  Workspace ws;
  Net* net = ws.CreateNet(Mlp("simple"));
  PlanNetMemory(*net, &ws, {}).reset();
  ASSERT_TRUE(net->Run().ok());  // ASan would flag a freed arena
  Workspace plain_ws;
  ASSERT_TRUE(plain_ws.CreateNet(Mlp("simple"))->Run().ok());
  EXPECT_EQ(Bytes(ws, "out"), Bytes(plain_ws, "out"));
}

TEST(MemoryPlanningTest, RandomNetsOnTwoDevicesMatchUnplannedRuns) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    NetDef def = RandomNet(seed, {.num_ops = 40,
                                  .blob_size = 64,
                                  .concat_split = true,
                                  .num_devices = 2,
                                  .all_outputs = false});
    Workspace plain_ws, ws;
    ASSERT_TRUE(plain_ws.CreateNet(def)->Run().ok());
    def.set_type("dag");
    Net* net = ws.CreateNet(def);
    MemoryPlanOptions options;
    options.verify = true;
    options.poison = true;
    std::unique_ptr<NetMemory> memory = PlanNetMemory(*net, &ws, options);
    ASSERT_TRUE(net->Run().ok()) << "seed " << seed;
    for (const std::string& out : def.external_output()) {
      EXPECT_EQ(Bytes(ws, out), Bytes(plain_ws, out)) << "seed " << seed << " blob " << out;
    }
  }
}

TEST(MemoryPlanningTest, NetsReorderedForMemoryComputeTheSameBits) {
  int reordered_nets = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    NetDef def = RandomNet(seed, {.num_ops = 40, .concat_split = true, .all_outputs = false});
    Workspace plain_ws, ws;
    ASSERT_TRUE(plain_ws.CreateNet(def)->Run().ok());
    NetDef reordered = ReorderForMemory(def, PlanRequestFor(def, plain_ws, {}));
    reordered_nets += reordered.SerializeAsString() != def.SerializeAsString();
    Net* net = ws.CreateNet(reordered);
    std::unique_ptr<NetMemory> memory = PlanNetMemory(*net, &ws, {.verify = true, .poison = true});
    ASSERT_TRUE(net->Run().ok()) << "seed " << seed;
    for (const std::string& out : def.external_output()) {
      EXPECT_EQ(Bytes(ws, out), Bytes(plain_ws, out)) << "seed " << seed << " blob " << out;
    }
  }
  EXPECT_GT(reordered_nets, 10);  // the pass does change orders
}

// Runs `text` planned (verified, poisoned) and unplanned; returns whether every external output is
// bit-identical.
void ExpectPlannedMatchesUnplanned(const std::string& text) {
  NetDef def = testing::NetFromText(text);
  Workspace plain_ws, ws;
  Net* plain = plain_ws.CreateNet(def);
  Net* net = ws.CreateNet(def);
  std::unique_ptr<NetMemory> memory = PlanNetMemory(*net, &ws, {.verify = true, .poison = true});
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(plain->Run().ok());
    Status s = net->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (const std::string& out : def.external_output()) {
      EXPECT_EQ(Bytes(ws, out), Bytes(plain_ws, out)) << out << " run " << run;
    }
  }
}

TEST(MemoryPlanningTest, BroadcastAddIsNotPlannedOverItsSmallerInput) {
  ExpectPlannedMatchesUnplanned(R"(name: "broadcast" external_output: "y"
    op { type: "UniformFill" output: "x" arg { name: "shape" ints: 4 ints: 8 } arg { name: "seed" i: 1 } }
    op { type: "UniformFill" output: "w" arg { name: "shape" ints: 8 } arg { name: "seed" i: 2 } }
    op { type: "Add" input: "x" input: "w" output: "c" arg { name: "broadcast" i: 1 } }
    op { type: "Add" input: "c" input: "x" output: "y" })");
}

TEST(MemoryPlanningTest, IterWithoutInputKeepsItsCounterAcrossRuns) {
  ExpectPlannedMatchesUnplanned(R"(name: "counter" external_output: "out"
    op { type: "Iter" output: "it" }
    op { type: "Copy" input: "it" output: "c" }
    op { type: "ConstantFill" output: "z" arg { name: "shape" ints: 1 }
         arg { name: "dtype" i: 10 } arg { name: "value" i: 100 } }
    op { type: "Add" input: "c" input: "z" output: "out" })");
}

TEST(MemoryPlanningTest, ABlobWrittenAtSeveralSizesGetsTheLargest) {
  ExpectPlannedMatchesUnplanned(R"(name: "resize" external_output: "y" external_output: "z"
    op { type: "ConstantFill" output: "x" arg { name: "shape" ints: 256 } arg { name: "value" f: 1 } }
    op { type: "Relu" input: "x" output: "y" }
    op { type: "ConstantFill" output: "x" arg { name: "shape" ints: 4 } arg { name: "value" f: 2 } }
    op { type: "Relu" input: "x" output: "z" })");
}

TEST(MemoryPlanningTest, RenamedNetsComputeTheSameBitsWithSeedlessFills) {
  NetDef def = testing::NetFromText(R"(name: "seedless" external_output: "out"
    op { type: "UniformFill" output: "a" arg { name: "shape" ints: 8 } }
    op { type: "Relu" input: "a" output: "b" }
    op { type: "UniformFill" output: "c" arg { name: "shape" ints: 8 } }
    op { type: "Add" input: "b" input: "c" output: "out" })");
  Workspace plain_ws, ws;
  ASSERT_TRUE(plain_ws.CreateNet(def)->Run().ok());
  NetDef renamed = RenameSharedBlobs(def, PlanRequestFor(def, plain_ws, {}));
  ASSERT_NE(renamed.SerializeAsString(), def.SerializeAsString());  // something was shared
  ASSERT_TRUE(ws.CreateNet(renamed)->Run().ok());
  EXPECT_EQ(Bytes(ws, "out"), Bytes(plain_ws, "out"));
}

// A "test" net in a child workspace: reads the train net's x and w1, writes its own blobs.
NetDef TestNet() {
  NetDef net = testing::NetFromText(R"(name: "test" external_output: "test/out"
    op { type: "FC" input: "x" input: "w1" input: "b1" output: "test/h" }
    op { type: "Tanh" input: "test/h" output: "test/t" }
    op { type: "Relu" input: "test/t" output: "test/out" })");
  return net;
}

TEST(MemoryPlanningTest, TestNetPlansIntoTheTrainNetsArena) {
  Workspace plain_ws;
  ASSERT_TRUE(plain_ws.CreateNet(Mlp("simple"))->Run().ok());
  Workspace plain_test_ws(&plain_ws);
  ASSERT_TRUE(plain_test_ws.CreateNet(TestNet())->Run().ok());

  Workspace ws;
  Net* train = ws.CreateNet(Mlp("dag"));
  MemoryPlanOptions train_options;
  train_options.keep = {"x", "w1", "b1"};  // the test net reads them
  std::unique_ptr<NetMemory> train_memory = PlanNetMemory(*train, &ws, train_options);
  ASSERT_TRUE(train->Run().ok());
  Workspace test_ws(&ws);
  Net* test = test_ws.CreateNet(TestNet());
  MemoryPlanOptions options;
  options.share_arenas_of = train_memory.get();
  std::unique_ptr<NetMemory> test_memory = PlanNetMemory(*test, &test_ws, options);
  EXPECT_GT(test_memory->plan().arena_bytes(), 0);
  EXPECT_LE(test_memory->plan().arena_bytes(), train_memory->plan().arena_bytes());
  EXPECT_EQ(test_memory->allocated_bytes(), 0);  // nothing beyond the train arena
  EXPECT_EQ(test_memory->arena(0), train_memory->arena(0));
  ASSERT_TRUE(test->Run().ok());
  EXPECT_EQ(Bytes(test_ws, "test/out"), Bytes(plain_test_ws, "test/out"));
  ASSERT_TRUE(train->Run().ok());  // the train net recomputes its blobs in the shared arena
}

// The error planning `borrower` (in a child workspace of the MLP's) into the arenas of the MLP,
// planned keeping `kept`, raises; "" if it plans.
std::string BorrowError(const NetDef& borrower, const std::set<std::string>& kept) {
  Workspace ws;
  Net* train = ws.CreateNet(Mlp("simple"));
  MemoryPlanOptions train_options;
  train_options.keep = kept;
  std::unique_ptr<NetMemory> train_memory = PlanNetMemory(*train, &ws, train_options);
  Workspace test_ws(&ws);
  Net* test = test_ws.CreateNet(borrower);
  MemoryPlanOptions options;
  options.share_arenas_of = train_memory.get();
  return StatusFromCall([&] { PlanNetMemory(*test, &test_ws, options); }).message();
}

TEST(MemoryPlanningTest, SharingAnArenaRefusesABlobBothNetsPlan) {
  const std::string error = BorrowError(testing::NetFromText(R"(name: "clash" external_output: "y"
    op { type: "Tanh" input: "x" output: "t1" }
    op { type: "Relu" input: "t1" output: "y" })"),
                                        {"x"});
  EXPECT_NE(error.find("blob 't1'"), std::string::npos) << error;
  EXPECT_NE(error.find("net 'clash'"), std::string::npos) << error;
}

TEST(MemoryPlanningTest, SharingAnArenaRefusesToReadABlobTheLenderRecycles) {
  const std::string error = BorrowError(TestNet(), {});  // the MLP recycles x: dead after FC
  EXPECT_NE(error.find("'x'"), std::string::npos) << error;
}

TEST(MemoryPlanningTest, SharingAnArenaRefusesToWriteABlobTheLenderRecycles) {
  const std::string error = BorrowError(testing::NetFromText(R"(name: "writer"
    external_output: "r1"
    op { type: "Tanh" input: "x" output: "r1" })"),
                                        {"x", "w1", "b1"});  // the MLP recycles r1
  EXPECT_NE(error.find("uses blob 'r1'"), std::string::npos) << error;
}

}  // namespace
}  // namespace braid
