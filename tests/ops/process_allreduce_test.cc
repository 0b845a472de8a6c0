// ProcessAllreduce (ops/collective/process_allreduce_op.h): processes (copies of this binary
// running ProcessAllreduceChild.DISABLED_Rank) each run a `dag` net of many independent
// ProcessAllreduce ops (buckets of 1 to 4 tensors of different sizes) with distinct tags, for
// hundreds of iterations, and compare every result bit for bit with the same replicas reduced in
// one process by the CPU Allreduce kernel. Values are small integers, so every sum is exact
// whatever the order of additions, and the mean multiplies the same sum by the same
// 1/replicas in both: the comparison is exact equality.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ops/collective/process_allreduce_op.h"
#include "ops/op_test_util.h"
#include "runtime/core/workspace.h"
#include "runtime/dist/process_group.h"
#include "runtime/exec/net.h"
#include "runtime/exec/process_collective_order.h"
#include "testing/child_processes.h"
#include "testing/sanitizers.h"

namespace braid::test {
namespace {

using braid::testing::ChildEnv;
using braid::testing::ChildProcesses;
using braid::testing::MakeTempDir;
using Clock = std::chrono::steady_clock;

constexpr int kBuckets = 16;
constexpr int kLocalReplicas = 2;

int TensorsIn(int bucket) { return 1 + bucket % 4; }
int64_t TensorSize(int bucket, int t) { return 1 + ((bucket * 4 + t) * 977) % 3000; }
std::string Grad(int bucket, int t, int replica) {
  return "cpu_" + std::to_string(replica) + "/grad_" + std::to_string(bucket) + "_" +
         std::to_string(t);
}
std::string Source(int bucket, int t, int replica) { return Grad(bucket, t, replica) + "_src"; }

// Replica j's source of tensor t of bucket k: (j + 1) * ((i + k + t) % 64).
void FeedSources(Workspace* ws, int first_replica, int replicas) {
  for (int k = 0; k < kBuckets; ++k) {
    for (int t = 0; t < TensorsIn(k); ++t) {
      for (int d = 0; d < replicas; ++d) {
        const int j = first_replica + d;
        std::vector<float> values(TensorSize(k, t));
        for (int64_t i = 0; i < TensorSize(k, t); ++i) values[i] = float((j + 1) * ((i + k + t) % 64));
        Feed<float>(ws, Source(k, t, d), {TensorSize(k, t)}, values);
      }
    }
  }
}

// Bucket k's `average` argument, shared by ProcessAllreduce and the reference Allreduce.
std::string AverageArg(int k) { return k % 4 == 3 ? " arg { name: \"average\" i: 1 }" : ""; }

std::string AlgorithmArg(int k) {
  return std::string(" arg { name: \"algorithm\" s: \"") +
         (k % 2 ? "halving_doubling" : "ring") + "\" }";
}

NetDef WithWorkers(NetDef net, int workers, int replicas) {
  auto* arg = net.add_arg();
  arg->set_name("num_workers");
  arg->set_i(workers);
  for (int k = 0; k < kBuckets; ++k) {
    for (int t = 0; t < TensorsIn(k); ++t) {
      for (int d = 0; d < replicas; ++d) net.add_external_output(Grad(k, t, d));
    }
  }
  return net;
}

// Per bucket k: Copy each replica's sources to its gradients, then one ProcessAllreduce of them.
NetDef ProcessAllreduceNet(int replicas, int workers) {
  std::vector<std::string> ops;
  for (int k = 0; k < kBuckets; ++k) {
    std::string bucket = "type: \"ProcessAllreduce\"";
    for (int d = 0; d < replicas; ++d) {
      for (int t = 0; t < TensorsIn(k); ++t) {
        ops.push_back("type: \"Copy\" input: \"" + Source(k, t, d) + "\" output: \"" +
                      Grad(k, t, d) + "\"");
        bucket += " input: \"" + Grad(k, t, d) + "\"";
      }
    }
    for (int d = 0; d < replicas; ++d) {
      for (int t = 0; t < TensorsIn(k); ++t) bucket += " output: \"" + Grad(k, t, d) + "\"";
    }
    bucket += " arg { name: \"tensors\" i: " + std::to_string(TensorsIn(k)) + " }";
    bucket += " arg { name: \"tag\" i: " + std::to_string(1000 + k) + " }" + AlgorithmArg(k) + AverageArg(k);
    ops.push_back(bucket);
  }
  return WithWorkers(NetOf(ops, "dag"), workers, replicas);
}

// The reference: one CPU Allreduce per tensor over every replica.
NetDef ReferenceNet(int replicas) {
  std::vector<std::string> ops;
  for (int k = 0; k < kBuckets; ++k) {
    for (int t = 0; t < TensorsIn(k); ++t) {
      std::string allreduce = "type: \"Allreduce\"";
      for (int d = 0; d < replicas; ++d) {
        ops.push_back("type: \"Copy\" input: \"" + Source(k, t, d) + "\" output: \"" +
                      Grad(k, t, d) + "\"");
        allreduce += " input: \"" + Grad(k, t, d) + "\"";
      }
      for (int d = 0; d < replicas; ++d) allreduce += " output: \"" + Grad(k, t, d) + "\"";
      ops.push_back(allreduce + AverageArg(k));
    }
  }
  return WithWorkers(NetOf(ops, "simple"), 1, replicas);
}

// A child's rank, world size and rendezvous, from the environment its parent test gave it.
ProcessGroupOptions ChildGroupOptions() {
  ProcessGroupOptions options;
  options.rank = std::stoi(ChildEnv("BRAID_GLOO_RANK"));
  options.world_size = std::stoi(ChildEnv("BRAID_GLOO_WORLD"));
  options.rendezvous = ChildEnv("BRAID_GLOO_URL");
  options.timeout = std::chrono::seconds(15);
  return options;
}

TEST(ProcessAllreduceChild, DISABLED_Rank) {
  const ProcessGroupOptions options = ChildGroupOptions();
  const int workers = std::stoi(ChildEnv("BRAID_GLOO_WORKERS"));
  const int iterations = std::stoi(ChildEnv("BRAID_GLOO_ITERATIONS"));

  // The reference: every process's replicas in one workspace, reduced by the CPU kernel.
  Workspace single;
  FeedSources(&single, 0, kLocalReplicas * options.world_size);
  ASSERT_TRUE(single.RunNetOnce(ReferenceNet(kLocalReplicas * options.world_size)).ok());

  std::unique_ptr<ProcessGroup> group;
  Status s = ProcessGroup::Connect(options, &group);
  ASSERT_TRUE(s.ok()) << s.ToString();
  SetProcessGroup(std::move(group));
  Workspace ws;
  FeedSources(&ws, options.rank * kLocalReplicas, kLocalReplicas);
  Net* net = ws.CreateNet(ProcessAllreduceNet(kLocalReplicas, workers));
  for (int it = 0; it < iterations; ++it) {
    s = net->Run();
    ASSERT_TRUE(s.ok()) << "iteration " << it << ": " << s.ToString();
    for (int k = 0; k < kBuckets; ++k) {
      for (int t = 0; t < TensorsIn(k); ++t) {
        const std::vector<float> expected = Fetch<float>(single, Grad(k, t, 0));
        for (int d = 0; d < kLocalReplicas; ++d) {
          ASSERT_EQ(Fetch<float>(ws, Grad(k, t, d)), expected)
              << "iteration " << it << ", bucket " << k << ", tensor " << t << ", replica " << d;
        }
      }
    }
  }
  SetProcessGroup(nullptr);
}

// Rank r holds r + 1 replicas; the job's replica j holds j + 1 in every element. By default the
// mean is over all of the job's replicas on every rank (it used to divide by this rank's replicas
// x the world size, so ranks with other device counts got other results); `weight` weighs ranks.
TEST(ProcessAllreduceChild, DISABLED_UnevenRank) {
  const ProcessGroupOptions options = ChildGroupOptions();
  std::unique_ptr<ProcessGroup> group;
  Status s = ProcessGroup::Connect(options, &group);
  ASSERT_TRUE(s.ok()) << s.ToString();
  SetProcessGroup(std::move(group));
  const int local = options.rank + 1;
  int first = 0, job = 0;
  for (int r = 0; r < options.world_size; ++r) {
    if (r < options.rank) first += r + 1;
    job += r + 1;
  }
  Workspace ws;
  std::string op = R"(type: "ProcessAllreduce" arg { name: "average" i: 1 } arg { name: "tag" i: 5 })";
  for (int d = 0; d < local; ++d) {
    const std::string blob = "g" + std::to_string(d);
    op += " input: \"" + blob + "\" output: \"" + blob + "\"";
  }
  const float mean = (job + 1) / 2.f;  // of 1 .. job
  for (int step = 0; step < 3; ++step) {
    for (int d = 0; d < local; ++d) {
      Feed<float>(&ws, "g" + std::to_string(d), {4}, std::vector<float>(4, float(first + d + 1)));
    }
    ASSERT_TRUE(RunOp(&ws, op));
    for (int d = 0; d < local; ++d) {
      EXPECT_EQ(Fetch<float>(ws, "g" + std::to_string(d)), std::vector<float>(4, mean))
          << "rank " << options.rank << " replica " << d << " step " << step;
    }
    // One host tensor holding the mean of this rank's replicas, weighed by their count: the same
    // mean over the job's replicas.
    float sum = 0;
    for (int d = 0; d < local; ++d) sum += float(first + d + 1);
    Feed<float>(&ws, "host", {4}, std::vector<float>(4, sum / local));
    ASSERT_TRUE(RunOp(&ws, R"(type: "ProcessAllreduce" input: "host" output: "host"
                              arg { name: "average" i: 1 } arg { name: "tag" i: 6 }
                              arg { name: "weight" i: )" + std::to_string(local) + " }"));
    EXPECT_FLOAT_EQ(Fetch<float>(ws, "host")[0], mean)
        << "rank " << options.rank << " (the mean of " << local << " replicas) step " << step;
    // Weight 1 on every rank: the mean of the ranks' means, whatever their replica counts (rank
    // r's replicas hold r(r + 1)/2 + 1 .. r(r + 1)/2 + r + 1).
    float means = 0;
    for (int r = 0; r < options.world_size; ++r) means += r * (r + 1) / 2 + (r + 2) / 2.f;
    for (int d = 0; d < local; ++d) {
      Feed<float>(&ws, "g" + std::to_string(d), {4}, std::vector<float>(4, float(first + d + 1)));
    }
    ASSERT_TRUE(RunOp(&ws, op + R"( arg { name: "weight" i: 1 })"));
    for (int d = 0; d < local; ++d) {
      EXPECT_FLOAT_EQ(Fetch<float>(ws, "g" + std::to_string(d))[0], means / options.world_size)
          << "rank " << options.rank << " replica " << d << " step " << step;
    }
  }
  SetProcessGroup(nullptr);
}

// Rank 0's net runs tags 7 then 8, rank 1's 8 then 7: each would wait in its first collective
// for the other until the group's 15 s timeout (ran to it before the first Run compared them).
TEST(ProcessAllreduceChild, DISABLED_SwappedRank) {
  const ProcessGroupOptions options = ChildGroupOptions();
  std::unique_ptr<ProcessGroup> group;
  Status s = ProcessGroup::Connect(options, &group);
  ASSERT_TRUE(s.ok()) << s.ToString();
  SetProcessGroup(std::move(group));
  Workspace ws;
  Feed<float>(&ws, "a", {2}, {1, 2});
  Feed<float>(&ws, "b", {2}, {3, 4});
  const int first = options.rank == 0 ? 7 : 8;
  const auto allreduce = [](const char* blob, int tag) {
    return std::string("type: \"ProcessAllreduce\" name: \"ar_") + blob + "\" input: \"" + blob +
           "\" output: \"" + blob + "\" arg { name: \"tag\" i: " + std::to_string(tag) + " }";
  };
  NetDef def = NetOf({allreduce("a", first), allreduce("b", 15 - first)}, "dag");
  def.set_name("swapped");
  Net* net = ws.CreateNet(def);
  const auto start = Clock::now();
  s = net->Run();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  const std::string here = options.rank == 0 ? "tag 7" : "tag 8";
  const std::string there = options.rank == 0 ? "tag 8" : "tag 7";
  EXPECT_NE(s.message().find("net 'swapped' on rank " + std::to_string(options.rank) +
                             ": the ranks list their cross-process collectives differently"),
            std::string::npos)
      << s.message();
  const std::string rest = " tensors 1 algorithm ring average 0";  // the defaults, filled in
  EXPECT_NE(s.message().find("collective 0 (in net order) is ProcessAllreduce " + here + rest +
                             " (op 0 'ar_a') here and ProcessAllreduce " + there + rest +
                             " on rank " + std::to_string(1 - options.rank)),
            std::string::npos)
      << s.message();
  EXPECT_EQ(net->Run().message(), s.message());  // refused again, without waiting
  SetProcessGroup(nullptr);
}

// The collective-order check alone (no op runs, so no GPU is needed): on a cuda device the ranks'
// replica counts must agree (NCCL's communicator), and their weights when averaging (NCCL's mean
// counts every replica alike); on cpu devices both may differ (Gloo's weighted mean).
TEST(ProcessAllreduceChild, DISABLED_WeightRank) {
  const ProcessGroupOptions options = ChildGroupOptions();
  std::unique_ptr<ProcessGroup> group;
  Status s = ProcessGroup::Connect(options, &group);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const auto net = [&](const char* name, int device_type, int weight, int average = 1,
                       int replicas = 1) {
    std::string op = "type: \"ProcessAllreduce\" name: \"ar\"";
    for (int r = 0; r < replicas; ++r) {
      op += " input: \"g" + std::to_string(r) + "\" output: \"g" + std::to_string(r) + "\"";
    }
    NetDef def = NetOf({op + " arg { name: \"average\" i: " + std::to_string(average) +
                        " } arg { name: \"weight\" i: " + std::to_string(weight) +
                        " } device_option { device_type: " + std::to_string(device_type) + " }"});
    def.set_name(name);
    return def;
  };
  const int weight = options.rank + 1;
  EXPECT_TRUE(CheckProcessCollectiveOrder(net("cpu_weights", 0, weight), group.get()).ok());
  EXPECT_TRUE(CheckProcessCollectiveOrder(net("cpu_replicas", 0, 1, 1, weight), group.get()).ok());
  EXPECT_TRUE(CheckProcessCollectiveOrder(net("cuda_same", 1, 1), group.get()).ok());
  // Summing, the weights do not matter; the replicas do.
  EXPECT_TRUE(CheckProcessCollectiveOrder(net("cuda_sum", 1, weight, 0), group.get()).ok());
  s = CheckProcessCollectiveOrder(net("cuda_replicas", 1, 1, 0, weight), group.get());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("average 0 replicas " + std::to_string(weight) + " (op 0 'ar') here"),
            std::string::npos)
      << s.message();
  s = CheckProcessCollectiveOrder(net("cuda_weights", 1, weight), group.get());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  const std::string rest = " tensors 1 algorithm ring average 1 replicas 1 weight ";
  EXPECT_NE(s.message().find(rest + std::to_string(weight) + " (op 0 'ar') here and "
                             "ProcessAllreduce tag " ),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(rest + std::to_string(2 - options.rank) + " on rank " +
                             std::to_string(1 - options.rank)),
            std::string::npos)
      << s.message();
}

// Rank 1 connects and leaves; rank 0's first Run must name the lost rank at once (the check of
// the collectives' order must not turn a lost peer into a wait for the group's timeout).
TEST(ProcessAllreduceChild, DISABLED_LeavingRank) {
  const ProcessGroupOptions options = ChildGroupOptions();
  std::unique_ptr<ProcessGroup> group;
  Status s = ProcessGroup::Connect(options, &group);
  ASSERT_TRUE(s.ok()) << s.ToString();
  if (options.rank == 1) return;  // its connections close as it exits
  SetProcessGroup(std::move(group));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Workspace ws;
  Feed<float>(&ws, "a", {2}, {1, 2});
  NetDef def = NetOf({R"(type: "ProcessAllreduce" input: "a" output: "a")"}, "dag");
  def.set_name("left");
  Net* net = ws.CreateNet(def);
  const auto start = Clock::now();
  s = net->Run();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_NE(s.message().find("net 'left' on rank 0: comparing the order of its cross-process "
                             "collectives: "),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("rank 1 was lost"), std::string::npos) << s.message();
  SetProcessGroup(nullptr);
}

// Runs child test `child` as `world` ranks meeting in a fresh file store; expects each to pass
// within 25 s.
void ExpectRanksPass(const std::string& child, int world) {
  const std::string dir = MakeTempDir("gloo_ranks");
  ChildProcesses children;
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    pids.push_back(children.Spawn("ProcessAllreduceChild." + child,
                                  {{"BRAID_GLOO_RANK", std::to_string(r)},
                                   {"BRAID_GLOO_WORLD", std::to_string(world)},
                                   {"BRAID_GLOO_URL", "file://" + dir},
                                   {"OMP_NUM_THREADS", "1"}}));
  }
  for (int r = 0; r < world; ++r) {
    EXPECT_EQ(children.Wait(pids[r], std::chrono::seconds(25)), 0) << child << " rank " << r;
  }
  std::filesystem::remove_all(dir);
}

TEST(ProcessAllreduceTest, APeerLostBeforeTheFirstRunIsNamedAtOnce) {
  ExpectRanksPass("DISABLED_LeavingRank", 2);
}

TEST(ProcessAllreduceTest, RanksListingCollectivesInAnotherOrderFailAtOnceNamingTheDifference) {
  ExpectRanksPass("DISABLED_SwappedRank", 2);
}

TEST(ProcessAllreduceTest, CudaRanksMustAgreeOnTheirWeightsCpuRanksNeedNot) {
  ExpectRanksPass("DISABLED_WeightRank", 2);
}

TEST(ProcessAllreduceTest, RanksWithDifferentReplicaCountsAverageOverTheJobsReplicas) {
  ExpectRanksPass("DISABLED_UnevenRank", 3);
}

// Hundreds of iterations, fewer for more ranks sharing the test machine's few cores (each
// iteration is 16 collectives, issued one by one with 1 worker; the test must end in well under
// 25 s on a loaded 2-core machine: 4 ranks x 1 worker x 100 iterations of 32 took 19 s there).
// ThreadSanitizer runs them several times slower: a quarter of the iterations there, enough for
// its checks, which see every iteration alike.
int Iterations(int world, int workers) {
  const int iterations = world == 2 ? 300 : workers == 1 ? 120 : 200;
  return braid::testing::kThreadSanitizer ? iterations / 4 : iterations;
}

class ProcessAllreduceTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ProcessAllreduceTest, DagOfIndependentAllreducesMatchesOneProcessBitForBit) {
  const auto [world, workers] = GetParam();
  const std::string dir = MakeTempDir("gloo_dag");
  ChildProcesses children;
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    pids.push_back(children.Spawn("ProcessAllreduceChild.DISABLED_Rank",
                                  {{"BRAID_GLOO_RANK", std::to_string(r)},
                                   {"BRAID_GLOO_WORLD", std::to_string(world)},
                                   {"BRAID_GLOO_URL", "file://" + dir},
                                   {"BRAID_GLOO_WORKERS", std::to_string(workers)},
                                   {"BRAID_GLOO_ITERATIONS", std::to_string(Iterations(world, workers))},
                                   {"OMP_NUM_THREADS", "1"}}));
  }
  const auto deadline = Clock::now() + std::chrono::seconds(25);
  for (int r = 0; r < world; ++r) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    EXPECT_EQ(children.Wait(pids[r], std::max(left, std::chrono::milliseconds(1))), 0)
        << "rank " << r << " of " << world << " (-1: still running at the deadline)";
  }
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(WorldAndWorkers, ProcessAllreduceTest,
                         ::testing::Combine(::testing::Values(2, 3, 4), ::testing::Values(1, 8)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "Ranks" +
                                  std::to_string(std::get<1>(info.param)) + "Workers";
                         });

TEST(ProcessAllreduceTest, WithoutAProcessGroupTheErrorNamesTheOp) {
  SetProcessGroup(nullptr);
  Workspace ws;
  Feed<float>(&ws, "a", {2}, {1, 2});
  const std::string error = RunOpError(&ws, R"(type: "ProcessAllreduce" name: "ar_w"
                                               input: "a" output: "a")");
  EXPECT_NE(error.find("ProcessAllreduce 'ar_w' needs a process group"), std::string::npos)
      << error;
}

// The cpu engine reads host memory only: a replica on a sim device is refused by name, before
// the op looks for its process group or touches a tensor (a sim device runs this same kernel).
TEST(ProcessAllreduceTest, TheCpuEngineRefusesTensorsOffTheHostNamingTheDevice) {
  SetProcessGroup(nullptr);
  for (const char* op_device : {"", "device_option { device_type: 1000 }"}) {
    Workspace ws;
    Feed<float>(&ws, "h", {2}, {1, 2});
    const Status s = ws.RunNetOnce(NetOf(
        {R"(type: "CopyCPUToGPU" input: "h" output: "g" device_option { device_type: 1000 })",
         std::string(R"(type: "ProcessAllreduce" name: "ar_sim" input: "g" output: "g" )") +
             op_device}));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("is on sim:0: the cpu engine (Gloo) reduces host tensors"),
              std::string::npos)
        << s.ToString();
  }
}

TEST(ProcessAllreduceTest, OneProcessSumsAndAveragesItsReplicasTensorByTensor) {
  const std::string dir = MakeTempDir("gloo_single");
  ProcessGroupOptions options;
  options.rendezvous = "file://" + dir;
  std::unique_ptr<ProcessGroup> group;
  ASSERT_TRUE(ProcessGroup::Connect(options, &group).ok());
  SetProcessGroup(std::move(group));
  Workspace ws;
  Feed<float>(&ws, "a", {3}, {1, 2, 3});
  Feed<float>(&ws, "b", {3}, {3, 4, 5});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ProcessAllreduce" input: "a" input: "b" output: "a"
                            output: "b" arg { name: "average" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "a"), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(Fetch<float>(ws, "b"), (std::vector<float>{2, 3, 4}));
  // Two tensors (x: 2 elements, y: 1) on each of two replicas: each tensor its own sum.
  Feed<float>(&ws, "x0", {2}, {1, 2});
  Feed<float>(&ws, "y0", {1}, {10});
  Feed<float>(&ws, "x1", {2}, {3, 4});
  Feed<float>(&ws, "y1", {1}, {20});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ProcessAllreduce" input: "x0" input: "y0" input: "x1"
                            input: "y1" output: "x0" output: "y0" output: "x1" output: "y1"
                            arg { name: "tensors" i: 2 })"));
  for (const char* x : {"x0", "x1"}) EXPECT_EQ(Fetch<float>(ws, x), (std::vector<float>{4, 6}));
  for (const char* y : {"y0", "y1"}) EXPECT_EQ(Fetch<float>(ws, y), (std::vector<float>{30}));
  EXPECT_NE(RunOpError(&ws, R"(type: "ProcessAllreduce" input: "a" output: "a"
                               arg { name: "weight" i: 0 })")
                .find("weight 0 is outside [1, 2^24]"),
            std::string::npos);
  EXPECT_NE(RunOpError(&ws, R"(type: "ProcessAllreduce" input: "a" output: "a"
                               arg { name: "tag" i: 4294901760 })")
                .find("tag 4294901760 is outside [0, 2^32 - 2^16)"),
            std::string::npos);
  EXPECT_NE(RunOpError(&ws, R"(type: "ProcessAllreduce" input: "a" output: "a"
                               arg { name: "algorithm" s: "tree" })")
                .find("unknown all-reduce algorithm 'tree'"),
            std::string::npos);
  EXPECT_NE(RunOpError(&ws, R"(type: "ProcessAllreduce" input: "x0" input: "y0" input: "x1"
                               output: "x0" output: "y0" output: "x1" arg { name: "tensors" i: 2 })")
                .find("tensors 2 must be at least 1 and divide the 3 inputs"),
            std::string::npos);
  const std::string mismatch = RunOpError(&ws, R"(type: "ProcessAllreduce" input: "x0" input: "y1"
                                                  output: "x0" output: "y1")");
  EXPECT_NE(mismatch.find("must have the shape of input"), std::string::npos) << mismatch;
  SetProcessGroup(nullptr);
  std::filesystem::remove_all(dir);
}

TEST(ProcessAllreduceTest, DefaultTagIsAStableHashOfTheOutputName) {
  EXPECT_EQ(DefaultCollectiveTag(""), 2166136261u);  // FNV-1a's offset basis
  EXPECT_EQ(DefaultCollectiveTag("a"), 0xe40c292cu);
  EXPECT_NE(DefaultCollectiveTag("cpu_0/fc_w_grad"), DefaultCollectiveTag("cpu_0/fc_b_grad"));
}

}  // namespace
}  // namespace braid::test
