// ReorderForMemory: a topological order of the DAG that the simple executor runs in less memory.
#include "planner/reorder.h"

#include <gtest/gtest.h>

#include <map>

#include "planner/dataflow.h"
#include "testing/net_text.h"
#include "tools/stress/random_net.h"

namespace braid {
namespace {

PlanRequest SimpleRequest(const NetDef& net) {
  PlanRequest request;
  request.executor = PlanExecutor::kSimple;
  for (const OperatorDef& op : net.op()) {
    for (const std::string& b : op.output()) request.blob_bytes[b] = 1024;
    request.inplace.emplace_back();
  }
  return request;
}

TEST(ReorderTest, InterleavedBranchesRunOneAfterTheOther) {
  // Each branch makes a big blob and shrinks it; listed interleaved, both big blobs are alive at
  // once.
  NetDef net = testing::NetFromText(R"(name: "interleaved" external_input: "x"
    external_output: "y"
    op { name: "a1" type: "Big" input: "x" output: "a1" }
    op { name: "b1" type: "Big" input: "x" output: "b1" }
    op { name: "a2" type: "Small" input: "a1" output: "a2" }
    op { name: "b2" type: "Small" input: "b1" output: "b2" }
    op { name: "y" type: "Add" input: "a2" input: "b2" output: "y" })");
  PlanRequest request = SimpleRequest(net);
  request.blob_bytes["a1"] = request.blob_bytes["b1"] = 4096;
  request.blob_bytes["a2"] = request.blob_bytes["b2"] = 64;
  NetDef reordered = ReorderForMemory(net, request);
  EXPECT_EQ(PlanMemory(net, request).arena_bytes(), 2 * 4096 + 64);
  EXPECT_EQ(PlanMemory(reordered, request).arena_bytes(), 4096 + 2 * 64);
  std::vector<std::string> names;
  for (const OperatorDef& op : reordered.op()) names.push_back(op.name());
  EXPECT_EQ(names, (std::vector<std::string>{"a1", "a2", "b1", "b2", "y"}));
}

TEST(ReorderTest, RandomNetsGetATopologicalOrderThatIsNeverWorse) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    NetDef net = RandomNet(seed, {.num_ops = 60, .concat_split = true, .all_outputs = false});
    PlanRequest request = SimpleRequest(net);
    NetDef reordered = ReorderForMemory(net, request);
    ASSERT_EQ(reordered.op_size(), net.op_size());
    // Op names are unique ("Type_index"): map each reordered op back to its original index.
    std::map<std::string, int> original_index, position;
    for (int j = 0; j < net.op_size(); ++j) original_index[net.op(j).name()] = j;
    for (int j = 0; j < reordered.op_size(); ++j) position[reordered.op(j).name()] = j;
    ASSERT_EQ(position.size(), static_cast<size_t>(net.op_size()));
    DataflowGraph g = BuildDataflow(net);
    for (int j = 0; j < net.op_size(); ++j) {
      for (int parent : g.parents[j]) {
        ASSERT_LT(position[net.op(parent).name()], position[net.op(j).name()]) << "seed " << seed;
      }
    }
    PlanRequest reordered_request = request;  // no in-place pairs: order does not matter
    ASSERT_LE(PlanMemory(reordered, reordered_request).arena_bytes(),
              PlanMemory(net, request).arena_bytes())
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace braid
