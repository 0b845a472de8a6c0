// The ops of PyTorch -> ONNX -> Caffe2 exports and of the classification zoo (ConvTranspose,
// PRelu, LRN, ResizeNearest, BatchMatMul) inside a whole backward pass built by
// AddGradientOperators: gradients against finite differences of the net, and bit-identical
// results on one and two dag workers (the planner sizes every blob from the schemas).
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

// L = BatchMatMul(ResizeNearest(LRN(PRelu(ConvTranspose(X)))), M) * lw; the loss is sum(L).
NetDef ExportNet(const std::string& name, const std::string& type) {
  NetDef net =
      NetOf({R"(type: "ConvTranspose" input: "X" input: "W1" input: "b1" output: "C1"
          arg { name: "kernel" i: 4 } arg { name: "stride" i: 2 } arg { name: "pad" i: 1 })",
             R"(type: "PRelu" input: "C1" input: "slope" output: "P1")",
             R"(type: "LRN" input: "P1" output: "N1" output: "N1_scale" arg { name: "size" i: 3 }
          arg { name: "alpha" f: 0.5 } arg { name: "beta" f: 0.75 } arg { name: "bias" f: 1 })",
             R"(type: "ResizeNearest" input: "N1" output: "R1" arg { name: "height_scale" f: 0.5 }
          arg { name: "width_scale" f: 1.5 })",
             R"(type: "BatchMatMul" input: "R1" input: "M" output: "B1")",
             R"(type: "Mul" input: "B1" input: "lw" output: "L")"},
            type);
  net.set_name(name);
  return net;
}

const std::vector<std::pair<std::string, std::vector<int64_t>>> kBlobs = {
    {"X", {2, 3, 3, 3}}, {"W1", {3, 4, 4, 4}}, {"b1", {4}},
    {"slope", {4}},      {"M", {2, 4, 9, 2}},  {"lw", {2, 4, 3, 2}}};

void FeedBlobs(Workspace* ws, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (const auto& [name, dims] : kBlobs) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> values(n);
    for (float& v : values) v = uniform(rng);
    if (name == "slope") {
      for (float& v : values) v = 0.25f + 0.1f * v;
    }
    Feed<float>(ws, name, dims, values);
  }
}

TEST(ExportOpsBackwardTest, NetGradientsMatchFiniteDifferences) {
  constexpr unsigned kSeed = 3;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  Workspace ws;
  FeedBlobs(&ws, kSeed);
  NetDef train = ExportNet("train", "simple");
  const GradientMap grads = AddGradientOperators(&train, {"L"});
  ASSERT_TRUE(ws.CreateNet(train)->Run().ok());
  EXPECT_EQ(ShapeOf(ws, "L"), (std::vector<int64_t>{2, 4, 3, 2}));
  Net* forward = ws.CreateNet(ExportNet("forward", "simple"));
  for (const std::string name : {"X", "W1", "b1", "slope", "M"}) {
    ASSERT_EQ(grads.count(name), 1u) << name;
    const std::vector<float> analytic = Fetch<float>(ws, grads.at(name));
    ASSERT_EQ(analytic.size(), static_cast<size_t>(ws.GetBlob(name)->numel())) << name;
    float largest = 0;
    for (float g : analytic) largest = std::max(largest, std::abs(g));
    EXPECT_GT(largest, 0.01f) << name << ": a gradient this small checks nothing";
    EXPECT_TRUE(
        testing::CheckNetGradient(forward, &ws, name, "L", analytic, analytic.size() > 64 ? 5 : 1));
  }
}

TEST(ExportOpsBackwardTest, BitIdenticalOnOneAndTwoWorkers) {
  constexpr unsigned kSeed = 4;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  std::vector<std::vector<float>> results[2];
  for (int workers : {1, 2}) {
    Workspace ws;
    FeedBlobs(&ws, kSeed);
    NetDef net = ExportNet("train", "dag");
    const GradientMap grads = AddGradientOperators(&net, {"L"});
    Argument* arg = net.add_arg();
    arg->set_name("num_workers");
    arg->set_i(workers);
    Net* n = ws.CreateNet(net);
    for (int run = 0; run < 3; ++run) ASSERT_TRUE(n->Run().ok());
    results[workers - 1].push_back(Fetch<float>(ws, "L"));
    for (const auto& [blob, grad] : grads) results[workers - 1].push_back(Fetch<float>(ws, grad));
  }
  EXPECT_EQ(results[0], results[1]);
}

}  // namespace
}  // namespace braid::test
