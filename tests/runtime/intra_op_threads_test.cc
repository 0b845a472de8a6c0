// Intra-op threads (runtime/exec/intra_op_threads.h): how many ops may run at once beside each op,
// the OpenMP teams that follow from it, and the dag executor's choice of listed order.
#include "runtime/exec/intra_op_threads.h"

#include <gtest/gtest.h>

#include "runtime/core/workspace.h"
#include "runtime/exec/dag_net.h"
#include "testing/net_text.h"

namespace braid {
namespace {

using ::braid::testing::NetFromText;

// A graph from parent lists (ops in topological order).
DataflowGraph Graph(const std::vector<std::vector<int>>& parents) {
  DataflowGraph g;
  g.parents = parents;
  g.children.resize(parents.size());
  for (size_t i = 0; i < parents.size(); ++i) {
    for (int p : parents[i]) g.children[p].push_back(static_cast<int>(i));
  }
  return g;
}

TEST(IntraOpThreadsTest, AChainRunsOneOpAtATime) {
  const DataflowGraph g = Graph({{}, {0}, {1}, {2}});
  EXPECT_EQ(OpsAtOnce(g, {-1, -1, -1, -1}, 8), (std::vector<int>{1, 1, 1, 1}));
}

TEST(IntraOpThreadsTest, TwoReplicasShareTheCoresAndTheirJoinHasThemAll) {
  // 0 -> {1 -> 2}, {3 -> 4} -> 5: two equal paths side by side, then a join.
  const DataflowGraph g = Graph({{}, {0}, {1}, {0}, {3}, {2, 4}});
  EXPECT_EQ(OpsAtOnce(g, std::vector<int>(6, -1), 8), (std::vector<int>{1, 2, 2, 2, 2, 1}));
  // At most `concurrency` ops run at once, and ops on one serial resource one after another.
  EXPECT_EQ(OpsAtOnce(g, std::vector<int>(6, -1), 1), std::vector<int>(6, 1));
  EXPECT_EQ(OpsAtOnce(g, std::vector<int>(6, 0), 8), std::vector<int>(6, 1));
}

TEST(IntraOpThreadsTest, ASideBranchOffTheLongestPathLeavesItFullTeams) {
  // 0 -> 1 -> 2 -> 3 -> 4 with a side op 5 after 1 (an update): the path has every core; the side
  // op shares them with the path op where it becomes ready, which runs alone.
  const DataflowGraph g = Graph({{}, {0}, {1}, {2}, {3}, {1}});
  EXPECT_EQ(OpsAtOnce(g, std::vector<int>(6, -1), 8), std::vector<int>(6, 1));
}

TEST(IntraOpThreadsTest, BudgetsDivideTheThreadsOrFollowTheNetsArgument) {
  NetDef def;
  EXPECT_EQ(IntraOpBudgets(def, {1, 2, 64}),
            (std::vector<int>{ProcessIntraOpThreads(), std::max(1, ProcessIntraOpThreads() / 2),
                              std::max(1, ProcessIntraOpThreads() / 64)}));
  Argument* set = def.add_arg();
  set->set_name("intra_op_threads");
  set->set_i(3);
  EXPECT_EQ(IntraOpBudgets(def, {1, 2}), (std::vector<int>{3, 3}));
}

TEST(IntraOpThreadsTest, DagRunsANetWithNothingSideBySideInListedOrder) {
  Workspace ws;
  std::string chain = R"(name: "chain" type: "dag" arg { name: "num_workers" i: 4 })";
  std::string wide = R"(name: "wide" type: "dag" arg { name: "num_workers" i: 4 })";
  for (int i = 0; i < 8; ++i) {
    chain += "op { type: \"NoOp\" input: \"c" + std::to_string(i) + "\" output: \"c" +
             std::to_string(i + 1) + "\" }";
    wide += "op { type: \"TestSleep\" output: \"w" + std::to_string(i) + "\" }";
  }
  ws.CreateBlob("c0");
  auto* in_order = static_cast<DagNet*>(ws.CreateNet(NetFromText(chain)));
  auto* parallel = static_cast<DagNet*>(ws.CreateNet(NetFromText(wide)));
  EXPECT_TRUE(in_order->runs_in_listed_order());
  EXPECT_FALSE(parallel->runs_in_listed_order());
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(in_order->intra_op_threads(i), ProcessIntraOpThreads());
    EXPECT_EQ(parallel->intra_op_threads(i), std::max(1, ProcessIntraOpThreads() / 4));
  }
  EXPECT_TRUE(in_order->Run().ok());
}

}  // namespace
}  // namespace braid
