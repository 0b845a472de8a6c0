// The nn ops' gradient makers inside a whole backward pass: a small CNN (Conv, training
// SpatialBN, in-place Relu, MaxPool, strided Conv without bias, global AveragePool) differentiated
// by AddGradientOperators, checked against finite differences and across executors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_test_util.h"
#include "runtime/core/autodiff.h"
#include "runtime/exec/net.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

// L = GlobalAveragePool(Conv(MaxPool(Relu(SpatialBN(Conv(X))))) * lw; the loss is sum(L).
NetDef CnnNet(const std::string& name, const std::string& type) {
  NetDef net =
      NetOf({R"(type: "Conv" input: "X" input: "W1" input: "b1" output: "C1"
          arg { name: "kernel" i: 3 } arg { name: "pad" i: 1 })",
             R"(type: "SpatialBN" input: "C1" input: "s" input: "bias" input: "rm" input: "rv"
          output: "B1" output: "rm" output: "rv" output: "sm" output: "siv")",
             R"(type: "Relu" input: "B1" output: "B1")",
             R"(type: "MaxPool" input: "B1" output: "P1" arg { name: "kernel" i: 2 }
          arg { name: "stride" i: 2 })",
             R"(type: "Conv" input: "P1" input: "W2" output: "C2" arg { name: "kernel" i: 3 }
          arg { name: "pad" i: 1 } arg { name: "stride" i: 2 })",
             R"(type: "AveragePool" input: "C2" output: "G" arg { name: "global_pooling" i: 1 })",
             R"(type: "Mul" input: "G" input: "lw" output: "L")"},
            type);
  net.set_name(name);
  return net;
}

const std::vector<std::pair<std::string, std::vector<int64_t>>> kCnnBlobs = {
    {"X", {2, 3, 8, 8}}, {"W1", {4, 3, 3, 3}}, {"b1", {4}},
    {"s", {4}},          {"bias", {4}},        {"rm", {4}},
    {"rv", {4}},         {"W2", {6, 4, 3, 3}}, {"lw", {2, 6, 1, 1}}};

void FeedCnn(Workspace* ws, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (const auto& [name, dims] : kCnnBlobs) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> values(n);
    for (float& v : values) v = uniform(rng);
    if (name == "s" || name == "rv") {
      for (float& v : values) v = 1.f + 0.5f * v;
    }
    Feed<float>(ws, name, dims, values);
  }
}

TEST(NnBackwardTest, CnnGradientsMatchFiniteDifferences) {
  constexpr unsigned kSeed = 5;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  Workspace ws;
  FeedCnn(&ws, kSeed);
  NetDef train = CnnNet("train", "simple");
  const GradientMap grads = AddGradientOperators(&train, {"L"});
  ASSERT_TRUE(ws.CreateNet(train)->Run().ok());
  Net* forward = ws.CreateNet(CnnNet("forward", "simple"));
  for (const std::string name : {"W1", "b1", "s", "bias", "W2", "X"}) {
    ASSERT_EQ(grads.count(name), 1u) << name;
    const std::vector<float> analytic = Fetch<float>(ws, grads.at(name));
    ASSERT_EQ(analytic.size(), static_cast<size_t>(ws.GetBlob(name)->numel())) << name;
    float largest = 0;
    for (float g : analytic) largest = std::max(largest, std::abs(g));
    if (name == "b1") {  // batch norm subtracts the batch mean: a bias before it has no effect
      EXPECT_LT(largest, 1e-4f);
    } else {
      EXPECT_GT(largest, 0.01f) << name << ": a gradient this small checks nothing";
    }
    // Every element of the small blobs, every 7th of the large ones.
    EXPECT_TRUE(
        testing::CheckNetGradient(forward, &ws, name, "L", analytic, analytic.size() > 64 ? 7 : 1));
  }
}

TEST(NnBackwardTest, CnnGradientsAreBitIdenticalOnOneAndTwoWorkers) {
  constexpr unsigned kSeed = 9;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  std::vector<std::vector<float>> results[2];
  for (int workers : {1, 2}) {
    Workspace ws;
    FeedCnn(&ws, kSeed);
    NetDef net = CnnNet("train", "dag");
    const GradientMap grads = AddGradientOperators(&net, {"L"});
    Argument* arg = net.add_arg();
    arg->set_name("num_workers");
    arg->set_i(workers);
    Net* n = ws.CreateNet(net);
    for (int run = 0; run < 3; ++run) ASSERT_TRUE(n->Run().ok());
    for (const auto& [blob, grad] : grads) results[workers - 1].push_back(Fetch<float>(ws, grad));
    results[workers - 1].push_back(Fetch<float>(ws, "rm"));
    results[workers - 1].push_back(Fetch<float>(ws, "rv"));
  }
  EXPECT_EQ(results[0], results[1]);
}

}  // namespace
}  // namespace braid::test
