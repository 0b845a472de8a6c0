// The dag executor must compute exactly what the simple executor computes, on any net, with any
// number of workers: the schedule may change, the bits may not.
#include <cstring>

#include <gtest/gtest.h>

#include "runtime/net.h"
#include "tools/stress/random_net.h"
#include "runtime/workspace.h"

namespace braid {
namespace {

// Every external output's bytes after `runs` runs of `def` with executor `type`.
std::vector<std::string> RunAndDump(NetDef def, const std::string& type, int workers, int runs) {
  def.set_type(type);
  Argument* arg = def.add_arg();
  arg->set_name("num_workers");
  arg->set_i(workers);
  Workspace ws;
  Net* net = ws.CreateNet(def);
  for (int r = 0; r < runs; ++r) {
    Status s = net->Run();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  std::vector<std::string> dump;
  for (const std::string& name : def.external_output()) {
    const Tensor* t = ws.GetBlob(name);
    dump.emplace_back(static_cast<const char*>(t->raw_data()), t->nbytes());
  }
  return dump;
}

TEST(ExecutorEquivalenceTest, DagMatchesSimpleBitForBitOnRandomNets) {
  constexpr uint64_t kFirstSeed = 1000;
  constexpr int kNets = 500;
  std::cout << "random nets: seeds " << kFirstSeed << ".." << kFirstSeed + kNets - 1 << "\n";
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kNets; ++seed) {
    // 20 to 99 ops over blobs of 1 to 256 floats: small nets and nets whose ops overlap in time.
    NetDef def = RandomNet(
        seed, {.num_inputs = 4, .num_ops = 20 + static_cast<int>(seed % 80),
               .blob_size = 1 << (seed % 9)});
    std::vector<std::string> expected = RunAndDump(def, "simple", 1, 2);
    for (int workers : {1, 2, 4, 8}) {
      ASSERT_EQ(RunAndDump(def, "dag", workers, 2), expected)
          << "seed " << seed << ", " << workers << " workers";
    }
  }
}

TEST(ExecutorEquivalenceTest, RandomNetsHaveHazardsWorthTesting) {
  // Guards the generator: nets must contain in-place ops, overwrites and control inputs.
  int in_place = 0, control = 0;
  for (uint64_t seed = 1000; seed < 1010; ++seed) {
    NetDef def = RandomNet(seed);
    for (const OperatorDef& op : def.op()) {
      if (op.input_size() > 0 && op.input(0) == op.output(0)) ++in_place;
      control += op.control_input_size();
    }
  }
  EXPECT_GT(in_place, 10);
  EXPECT_GT(control, 5);
}

}  // namespace
}  // namespace braid
