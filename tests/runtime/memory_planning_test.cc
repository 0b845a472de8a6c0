// Planning a built net's memory in a workspace: same bits as unplanned, nothing allocated per run.
#include "runtime/exec/memory_planning.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "braid/status.h"
#include "planner/renaming.h"
#include "planner/reorder.h"
#include "runtime/core/allocator.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/workspace.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/exec/net.h"
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

// Growing a shared arena: a train step (batch 8) whose test net (batch 64) needs a larger arena.
NetDef OnDevice(NetDef net, const Device& device) {
  *net.mutable_device_option() = DeviceToProto(device);
  return net;
}

NetDef GrowthInitNet(const Device& device) {
  return OnDevice(testing::NetFromText(R"(name: "init"
    op { type: "GaussianFill" output: "w" arg { name: "shape" ints: 64 ints: 32 }
         arg { name: "seed" i: 2 } arg { name: "std" f: 0.2 } }
    op { type: "ConstantFill" output: "b" arg { name: "shape" ints: 64 }
         arg { name: "value" f: 0.1 } }
    op { type: "ConstantFill" output: "w_momentum" arg { name: "shape" ints: 64 ints: 32 } }
    op { type: "ConstantFill" output: "b_momentum" arg { name: "shape" ints: 64 } }
    op { type: "ConstantFill" output: "lr" arg { name: "shape" ints: 1 }
         arg { name: "value" f: 0.5 } })"),
                  device);
}

// x -> FC(w, b) -> Tanh -> mean as the loss, and a momentum SGD step on w and b.
NetDef GrowthTrainNet(const std::string& type, const Device& device, int64_t batch = 8) {
  NetDef net = testing::NetFromText(R"(name: "train"
    op { type: "GaussianFill" output: "x" arg { name: "shape" ints: 8 ints: 32 }
         arg { name: "seed" i: 1 } }
    op { type: "FC" input: "x" input: "w" input: "b" output: "h" }
    op { type: "Tanh" input: "h" output: "t" }
    op { type: "AveragedLoss" input: "t" output: "loss" })");
  net.mutable_op(0)->mutable_arg(0)->set_ints(0, batch);
  AddGradientOperators(&net, {"loss"});
  for (const char* param : {"w", "b"}) {
    OperatorDef* update = net.add_op();
    update->set_type("MomentumSGDUpdate");
    for (const std::string& in : {std::string(param) + "_grad", std::string(param) + "_momentum",
                                  std::string("lr"), std::string(param)}) {
      update->add_input(in);
    }
    for (const std::string& out :
         {std::string(param) + "_grad", std::string(param) + "_momentum", std::string(param)}) {
      update->add_output(out);
    }
    Argument* momentum = update->add_arg();
    momentum->set_name("momentum");
    momentum->set_f(0.9f);
  }
  net.set_type(type);
  return OnDevice(net, device);
}

NetDef GrowthTestNet(const Device& device, int64_t batch = 64) {
  NetDef net = testing::NetFromText(R"(name: "test" external_output: "test/out"
    op { type: "GaussianFill" output: "test/x" arg { name: "shape" ints: 64 ints: 32 }
         arg { name: "seed" i: 3 } }
    op { type: "FC" input: "test/x" input: "w" input: "b" output: "test/h" }
    op { type: "Tanh" input: "test/h" output: "test/t" }
    op { type: "Relu" input: "test/t" output: "test/out" })");
  net.mutable_op(0)->mutable_arg(0)->set_ints(0, batch);
  return OnDevice(net, device);
}

std::string HostBytes(const Workspace& ws, const std::string& blob) {
  Tensor host;
  host.CopyFrom(*ws.GetBlob(blob));
  return std::string(static_cast<const char*>(host.raw_data()), host.nbytes());
}

// The train and test nets of the growth tests, planned with poisoning, the test net into the
// train net's arenas when `shared`.
struct GrowthNets {
  GrowthNets(const std::string& type, const Device& device, bool shared) {
    EXPECT_TRUE(ws.RunNetOnce(GrowthInitNet(device)).ok());
    train = ws.CreateNet(GrowthTrainNet(type, device));
    test = test_ws.CreateNet(GrowthTestNet(device));
    MemoryPlanOptions train_options;
    train_options.mode = PlanMode::kTraining;
    train_options.share_activations = true;
    train_options.share_parameter_gradients = true;
    train_options.keep = {"loss"};
    train_options.verify = true;
    train_options.poison = true;
    train_memory = PlanNetMemory(*train, &ws, train_options);
    MemoryPlanOptions test_options;
    test_options.verify = true;
    test_options.poison = true;
    if (shared) test_options.share_arenas_of = train_memory.get();
    test_memory = PlanNetMemory(*test, &test_ws, test_options);
  }

  Workspace ws;
  Workspace test_ws{&ws};
  Net* train = nullptr;
  Net* test = nullptr;
  std::unique_ptr<NetMemory> train_memory;
  std::unique_ptr<NetMemory> test_memory;
};

// Whether every planned blob of `memory`'s arena 0 in `ws` is a view at its offset into `arena`.
::testing::AssertionResult ViewsInto(const NetMemory& memory, const Workspace& ws,
                                     const std::shared_ptr<void>& arena) {
  for (const BlobOffset& blob : memory.plan().arenas.at(0).blobs) {
    const void* data = ws.GetBlob(blob.blob)->storage()->data();
    if (data != static_cast<char*>(arena.get()) + blob.offset) {
      return ::testing::AssertionFailure() << "blob '" << blob.blob << "' is not in the arena";
    }
  }
  return ::testing::AssertionSuccess();
}

const Device kDevices[] = {Device{DeviceType::kCpu, 0}, Device{DeviceType::kSim, 0}};

TEST(MemoryPlanningTest, ALargerTestNetGrowsTheSharedArenaForBothNets) {
  for (const Device& device : kDevices) {
    SCOPED_TRACE(device.ToString());
    Workspace ws;
    ASSERT_TRUE(ws.RunNetOnce(GrowthInitNet(device)).ok());
    Net* train = ws.CreateNet(GrowthTrainNet("dag", device));
    MemoryPlanOptions train_options;
    train_options.mode = PlanMode::kTraining;
    train_options.share_activations = true;
    std::unique_ptr<NetMemory> train_memory = PlanNetMemory(*train, &ws, train_options);
    ASSERT_TRUE(train->Run().ok());
    const int64_t train_bytes = train_memory->plan().arena_bytes();
    std::weak_ptr<void> old_arena = train_memory->arena(0);

    Workspace test_ws(&ws);
    Net* test = test_ws.CreateNet(GrowthTestNet(device));
    MemoryPlanOptions options;
    options.share_arenas_of = train_memory.get();
    std::unique_ptr<NetMemory> test_memory = PlanNetMemory(*test, &test_ws, options);
    const int64_t test_bytes = test_memory->plan().arena_bytes();
    ASSERT_GT(test_bytes, train_bytes);                                   // else nothing grows
    EXPECT_EQ(test_memory->allocated_bytes(), test_bytes - train_bytes);  // the growth only
    EXPECT_EQ(train_memory->allocated_bytes(), train_bytes);
    EXPECT_EQ(test_memory->arena(0), train_memory->arena(0));
    EXPECT_EQ(train_memory->arena_bytes(0), test_bytes);
    EXPECT_EQ(test_memory->arena_bytes(0), test_bytes);
    EXPECT_TRUE(ViewsInto(*train_memory, ws, train_memory->arena(0)));
    EXPECT_TRUE(ViewsInto(*test_memory, test_ws, train_memory->arena(0)));
    EXPECT_TRUE(old_arena.expired());  // released with its last view
    ASSERT_TRUE(test->Run().ok());
    ASSERT_TRUE(train->Run().ok());
  }
}

TEST(MemoryPlanningTest, AlternatingRunsInAGrownArenaMatchSeparateArenas) {
  for (const Device& device : kDevices) {
    for (const char* type : {"simple", "dag"}) {
      SCOPED_TRACE(device.ToString() + " " + type);
      GrowthNets separate(type, device, /*shared=*/false);
      GrowthNets shared(type, device, /*shared=*/true);
      ASSERT_GT(shared.test_memory->allocated_bytes(), 0);  // it grew
      ASSERT_LT(shared.test_memory->allocated_bytes(), separate.test_memory->allocated_bytes());
      for (int step = 0; step < 4; ++step) {
        ASSERT_TRUE(separate.train->Run().ok());
        ASSERT_TRUE(shared.train->Run().ok());
        EXPECT_EQ(HostBytes(shared.ws, "loss"), HostBytes(separate.ws, "loss")) << "step " << step;
        ASSERT_TRUE(separate.test->Run().ok());
        ASSERT_TRUE(shared.test->Run().ok());
        EXPECT_EQ(HostBytes(shared.test_ws, "test/out"), HostBytes(separate.test_ws, "test/out"))
            << "step " << step;
      }
      for (const char* param : {"w", "b", "w_momentum", "b_momentum"}) {
        EXPECT_EQ(HostBytes(shared.ws, param), HostBytes(separate.ws, param)) << param;
      }
    }
  }
}

// Sets every sim device's capacity while it lives.
class SimCapacity {
 public:
  explicit SimCapacity(int64_t bytes) : saved_(GetSimDeviceOptions()) {
    SimDeviceOptions options = saved_;
    options.capacity_bytes = bytes;
    SetSimDeviceOptions(options);
  }
  ~SimCapacity() { SetSimDeviceOptions(saved_); }

 private:
  SimDeviceOptions saved_;
};

// Plans the growth tests' test net into the arena of their train net (run once), both on `sim`,
// with the device's capacity set to what it holds then plus `spare(train arena, test arena)`
// bytes, each as the caching allocator rounds it (batches large enough for arenas of whole 2 MiB
// segments, so the growth needs a raw allocation). Returns the error of planning ("" if it planned); `loss` gets the train net's loss after
// one more run.
std::string GrowWithSpareBytes(int sim, const std::function<int64_t(int64_t, int64_t)>& spare,
                               std::string* loss) {
  const Device device{DeviceType::kSim, sim};
  Workspace ws;
  EXPECT_TRUE(ws.RunNetOnce(GrowthInitNet(device)).ok());
  Net* train = ws.CreateNet(GrowthTrainNet("simple", device, /*batch=*/16384));
  MemoryPlanOptions train_options;
  train_options.mode = PlanMode::kTraining;
  train_options.share_activations = true;
  train_options.keep = {"loss"};
  std::unique_ptr<NetMemory> train_memory = PlanNetMemory(*train, &ws, train_options);
  EXPECT_TRUE(train->Run().ok());
  Workspace test_ws(&ws);
  Net* test = test_ws.CreateNet(GrowthTestNet(device, /*batch=*/65536));
  const auto rounded = [](int64_t bytes) {
    return static_cast<int64_t>(CachingAllocator::RoundedSize(static_cast<size_t>(bytes)));
  };
  const int64_t test_bytes =
      rounded(PlanMemory(test->def(), PlanRequestFor(test->def(), test_ws, {})).arena_bytes());
  const int64_t train_bytes = rounded(train_memory->plan().arena_bytes());
  EXPECT_GT(test_bytes, train_bytes);
  std::string error;
  {
    const int64_t held = SimDevice::Get(sim)->stats().bytes_in_use;
    SimCapacity capacity(held + spare(train_bytes, test_bytes));
    MemoryPlanOptions options;
    options.share_arenas_of = train_memory.get();
    error = StatusFromCall([&] { PlanNetMemory(*test, &test_ws, options); }).message();
  }
  EXPECT_TRUE(ViewsInto(*train_memory, ws, train_memory->arena(0)));
  EXPECT_TRUE(train->Run().ok());
  *loss = HostBytes(ws, "loss");
  return error;
}

TEST(MemoryPlanningTest, GrowingAnArenaHoldsOnlyTheLargerSizeOnTheDevice) {
  std::string loss;
  // The old arena is released before the larger one is allocated: room for the growth suffices.
  const std::string error = GrowWithSpareBytes(
      7, [](int64_t train, int64_t test) { return test - train + 512; }, &loss);
  EXPECT_EQ(error, "");
}

TEST(MemoryPlanningTest, AGrowthThatDoesNotFitThrowsAndLeavesTheTrainNetRunning) {
  std::string loss, reference_loss;
  const std::string error = GrowWithSpareBytes(
      8, [](int64_t train, int64_t test) { return (test - train) / 2; }, &loss);
  EXPECT_NE(error.find("out of memory on sim:8"), std::string::npos) << error;
  GrowWithSpareBytes(
      9, [](int64_t, int64_t) { return int64_t{1} << 30; }, &reference_loss);
  EXPECT_EQ(loss, reference_loss);  // the train net computes the same in its restored arena
}

// The simple executor only launches device ops: kernels of different devices run at once, so a
// net with any device op is planned for every order its dataflow DAG allows, not for its listed
// order (two sim replicas of a training step corrupted a label that way).
TEST(MemoryPlanningTest, ASimpleNetWithDeviceOpsIsPlannedForItsDagNotItsListedOrder) {
  const Workspace ws;
  EXPECT_EQ(PlanRequestFor(Mlp("simple"), ws, {}).executor, PlanExecutor::kSimple);
  NetDef on_sim = Mlp("simple");
  for (int i = 0; i < on_sim.op_size(); ++i) {
    *on_sim.mutable_op(i)->mutable_device_option() = DeviceToProto(Device{DeviceType::kSim, i % 2});
  }
  EXPECT_EQ(PlanRequestFor(on_sim, ws, {}).executor, PlanExecutor::kDag);
}

}  // namespace
}  // namespace braid
