#include "tools/bench/executor_nets.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace braid::bench {
namespace {

std::string BlobOf(int op) { return "b" + std::to_string(op); }

NetDef EmptyDagNet(int workers) {
  NetDef def;
  def.set_type("dag");
  Argument* arg = def.add_arg();
  arg->set_name("num_workers");
  arg->set_i(workers);
  return def;
}

// Appends a NoOp reading the outputs of `inputs`; returns its index.
int AddNoOp(NetDef* def, const std::vector<int>& inputs) {
  int index = def->op_size();
  OperatorDef* op = def->add_op();
  op->set_type("NoOp");
  for (int in : inputs) op->add_input(BlobOf(in));
  op->add_output(BlobOf(index));
  return index;
}

}  // namespace

NetDef RandomLayeredDag(int num_ops, int width, uint64_t seed, int workers) {
  NetDef def = EmptyDagNet(workers);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, width - 1);
  for (int i = 0; i < num_ops; ++i) {
    int layer = i / width;
    if (layer == 0) {
      AddNoOp(&def, {});
      continue;
    }
    int previous_layer_start = (layer - 1) * width;
    std::vector<int> inputs = {previous_layer_start + pick(rng)};
    if (rng() % 2 == 1) {
      int second = previous_layer_start + pick(rng);
      if (second != inputs[0]) inputs.push_back(second);
    }
    std::sort(inputs.begin(), inputs.end());
    AddNoOp(&def, inputs);
  }
  return def;
}

NetDef Chain(int num_ops, int workers) {
  NetDef def = EmptyDagNet(workers);
  AddNoOp(&def, {});
  for (int i = 1; i < num_ops; ++i) AddNoOp(&def, {i - 1});
  return def;
}

NetDef FanOutFanIn(int num_ops, int width, int workers) {
  NetDef def = EmptyDagNet(workers);
  const int block_size = width + 2;
  const int blocks = std::max(1, (num_ops + block_size / 2) / block_size);
  int previous_sink = -1;
  for (int b = 0; b < blocks; ++b) {
    int source = AddNoOp(&def, previous_sink < 0 ? std::vector<int>{} : std::vector<int>{previous_sink});
    std::vector<int> middle(width);
    for (int m = 0; m < width; ++m) middle[m] = AddNoOp(&def, {source});
    previous_sink = AddNoOp(&def, middle);
  }
  return def;
}

}  // namespace braid::bench
