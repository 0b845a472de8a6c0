// Allreduce on engine GLOO (ops/collective/allreduce_gloo_op.h): processes (copies of this binary
// running AllreduceGlooChild.DISABLED_Rank) each run a `dag` net of many independent Allreduce ops
// with distinct tags, for hundreds of iterations, and compare every result bit for bit with the
// same replicas reduced in one process by the CPU kernel. Values are small integers, so every sum
// is exact whatever the order of additions, and the mean multiplies the same sum by the same
// 1/replicas in both: the comparison is exact equality.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ops/collective/allreduce_gloo_op.h"
#include "ops/op_test_util.h"
#include "runtime/net.h"
#include "runtime/process_group.h"
#include "runtime/workspace.h"
#include "testing/child_processes.h"

namespace braid::test {
namespace {

using braid::testing::ChildEnv;
using braid::testing::ChildProcesses;
using braid::testing::MakeTempDir;
using Clock = std::chrono::steady_clock;

constexpr int kOps = 32;
constexpr int kLocalReplicas = 2;

int64_t OpSize(int k) { return 1 + (k * 977) % 3000; }
std::string Grad(int k, int replica) {
  return "cpu_" + std::to_string(replica) + "/grad_" + std::to_string(k);
}
std::string Source(int k, int replica) { return Grad(k, replica) + "_src"; }

// Replica j's source of op k: (j + 1) * ((i + k) % 64).
void FeedSources(Workspace* ws, int first_replica, int replicas) {
  for (int k = 0; k < kOps; ++k) {
    for (int d = 0; d < replicas; ++d) {
      const int j = first_replica + d;
      std::vector<float> values(OpSize(k));
      for (int64_t i = 0; i < OpSize(k); ++i) values[i] = float((j + 1) * ((i + k) % 64));
      Feed<float>(ws, Source(k, d), {OpSize(k)}, values);
    }
  }
}

// Per op k: Copy each replica's source to its gradient, then one Allreduce of the gradients.
NetDef AllreduceNet(int replicas, const std::string& engine, int workers) {
  std::vector<std::string> ops;
  for (int k = 0; k < kOps; ++k) {
    std::string allreduce = "type: \"Allreduce\" engine: \"" + engine + "\"";
    for (int d = 0; d < replicas; ++d) {
      ops.push_back("type: \"Copy\" input: \"" + Source(k, d) + "\" output: \"" + Grad(k, d) + "\"");
      allreduce += " input: \"" + Grad(k, d) + "\"";
    }
    for (int d = 0; d < replicas; ++d) allreduce += " output: \"" + Grad(k, d) + "\"";
    allreduce += " arg { name: \"tag\" i: " + std::to_string(1000 + k) + " }";
    allreduce += std::string(" arg { name: \"algorithm\" s: \"") +
                 (k % 2 ? "halving_doubling" : "ring") + "\" }";
    if (k % 4 == 3) allreduce += " arg { name: \"average\" i: 1 }";
    ops.push_back(allreduce);
  }
  NetDef net = NetOf(ops, "dag");
  auto* arg = net.add_arg();
  arg->set_name("num_workers");
  arg->set_i(workers);
  for (int k = 0; k < kOps; ++k) {
    for (int d = 0; d < replicas; ++d) net.add_external_output(Grad(k, d));
  }
  return net;
}

TEST(AllreduceGlooChild, DISABLED_Rank) {
  ProcessGroupOptions options;
  options.rank = std::stoi(ChildEnv("BRAID_GLOO_RANK"));
  options.world_size = std::stoi(ChildEnv("BRAID_GLOO_WORLD"));
  options.rendezvous = ChildEnv("BRAID_GLOO_URL");
  options.timeout = std::chrono::seconds(15);
  const int workers = std::stoi(ChildEnv("BRAID_GLOO_WORKERS"));
  const int iterations = std::stoi(ChildEnv("BRAID_GLOO_ITERATIONS"));

  // The reference: every process's replicas in one workspace, reduced by the CPU kernel.
  Workspace single;
  FeedSources(&single, 0, kLocalReplicas * options.world_size);
  ASSERT_TRUE(single.RunNetOnce(AllreduceNet(kLocalReplicas * options.world_size, "", 1)).ok());

  std::unique_ptr<ProcessGroup> group;
  Status s = ProcessGroup::Connect(options, &group);
  ASSERT_TRUE(s.ok()) << s.ToString();
  SetProcessGroup(std::move(group));
  Workspace ws;
  FeedSources(&ws, options.rank * kLocalReplicas, kLocalReplicas);
  Net* net = ws.CreateNet(AllreduceNet(kLocalReplicas, "GLOO", workers));
  for (int it = 0; it < iterations; ++it) {
    s = net->Run();
    ASSERT_TRUE(s.ok()) << "iteration " << it << ": " << s.ToString();
    for (int k = 0; k < kOps; ++k) {
      const std::vector<float> expected = Fetch<float>(single, Grad(k, 0));
      for (int d = 0; d < kLocalReplicas; ++d) {
        ASSERT_EQ(Fetch<float>(ws, Grad(k, d)), expected)
            << "iteration " << it << ", op " << k << ", replica " << d;
      }
    }
  }
  SetProcessGroup(nullptr);
}

// Hundreds of iterations for 2 ranks, fewer for more ranks sharing the test machine's few cores
// (each iteration is 32 collectives, issued one by one with 1 worker; the test must end in well
// under 30 s on a loaded 2-core machine: 4 ranks x 1 worker x 100 iterations took 19 s there).
int Iterations(int world, int workers) { return world == 2 ? 200 : workers == 1 ? 60 : 100; }

class AllreduceGlooTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(AllreduceGlooTest, DagOfIndependentAllreducesMatchesOneProcessBitForBit) {
  const auto [world, workers] = GetParam();
  const std::string dir = MakeTempDir("gloo_dag");
  ChildProcesses children;
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    pids.push_back(children.Spawn("AllreduceGlooChild.DISABLED_Rank",
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

INSTANTIATE_TEST_SUITE_P(WorldAndWorkers, AllreduceGlooTest,
                         ::testing::Combine(::testing::Values(2, 3, 4), ::testing::Values(1, 8)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "Ranks" +
                                  std::to_string(std::get<1>(info.param)) + "Workers";
                         });

TEST(AllreduceGlooTest, WithoutAProcessGroupTheErrorNamesTheOp) {
  SetProcessGroup(nullptr);
  Workspace ws;
  Feed<float>(&ws, "a", {2}, {1, 2});
  const std::string error = RunOpError(&ws, R"(type: "Allreduce" engine: "GLOO" name: "ar_w"
                                               input: "a" output: "a")");
  EXPECT_NE(error.find("Allreduce 'ar_w' (engine GLOO) needs a process group"), std::string::npos)
      << error;
}

TEST(AllreduceGlooTest, OneProcessSumsAndAveragesItsReplicas) {
  const std::string dir = MakeTempDir("gloo_single");
  ProcessGroupOptions options;
  options.rendezvous = "file://" + dir;
  std::unique_ptr<ProcessGroup> group;
  ASSERT_TRUE(ProcessGroup::Connect(options, &group).ok());
  SetProcessGroup(std::move(group));
  Workspace ws;
  Feed<float>(&ws, "a", {3}, {1, 2, 3});
  Feed<float>(&ws, "b", {3}, {3, 4, 5});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Allreduce" engine: "GLOO" input: "a" input: "b" output: "a"
                            output: "b" arg { name: "average" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "a"), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(Fetch<float>(ws, "b"), (std::vector<float>{2, 3, 4}));
  EXPECT_NE(RunOpError(&ws, R"(type: "Allreduce" engine: "GLOO" input: "a" output: "a"
                               arg { name: "algorithm" s: "tree" })")
                .find("unknown all-reduce algorithm 'tree'"),
            std::string::npos);
  SetProcessGroup(nullptr);
  std::filesystem::remove_all(dir);
}

TEST(AllreduceGlooTest, DefaultTagIsAStableHashOfTheOutputName) {
  EXPECT_EQ(DefaultCollectiveTag(""), 2166136261u);  // FNV-1a's offset basis
  EXPECT_EQ(DefaultCollectiveTag("a"), 0xe40c292cu);
  EXPECT_NE(DefaultCollectiveTag("cpu_0/fc_w_grad"), DefaultCollectiveTag("cpu_0/fc_b_grad"));
}

}  // namespace
}  // namespace braid::test
