// CUDA kernels of ops/loss against their CPU kernels (tests/ops/cuda_test_util.h), and what the
// CUDA kernels do instead of throwing for labels out of range (NaN).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ops/cuda_test_util.h"

namespace braid::test {
namespace {

// Softmax and log agree to float rounding (device expf and logf are within 2 ulp of the host's).
constexpr Tolerance kLossTolerance{1e-6, 1e-5};

// n labels in [0, d), spread over the classes.
HostBlob Labels(const std::string& name, std::vector<int64_t> dims, int64_t n, int32_t d) {
  std::vector<int32_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<int32_t>((i * 7 + 3) % d);
  return Int32s(name, std::move(dims), values);
}

std::vector<float> ValuesOf(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

TEST(CudaLoss, SoftmaxWithLossMatchesCpuForOddClassCounts) {
  BRAID_REQUIRE_GPU();
  for (int32_t d : {1, 10, 1000}) {
    SCOPED_TRACE("classes " + std::to_string(d));
    ExpectCudaMatchesCpu(R"(type: "SoftmaxWithLoss" input: "X" input: "T" output: "P" output: "L")",
                         {RandomFloats("X", {5, d}, 1, -4, 4), Labels("T", {5}, 5, d)},
                         kLossTolerance);
  }
}

TEST(CudaLoss, SoftmaxWithLossMatchesCpuWithWeightsScaleAndAxis) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "SoftmaxWithLoss" input: "X" input: "T" input: "W" output: "P"
                          output: "L" arg { name: "scale" f: 0.25 })",
                       {RandomFloats("X", {6, 11}, 2, -3, 3), Labels("T", {6, 1}, 6, 11),
                        RandomFloats("W", {6}, 3, 0, 2)},
                       kLossTolerance);
  ExpectCudaMatchesCpu(R"(type: "SoftmaxWithLoss" input: "X" input: "T" output: "P" output: "L"
                          arg { name: "axis" i: 2 })",
                       {RandomFloats("X", {2, 3, 7}, 4, -3, 3), Labels("T", {2, 3}, 6, 7)},
                       kLossTolerance);
  // All weights zero: the loss is 0 on both.
  ExpectCudaMatchesCpu(R"(type: "SoftmaxWithLoss" input: "X" input: "T" input: "W" output: "P"
                          output: "L")",
                       {RandomFloats("X", {3, 5}, 5), Labels("T", {3}, 3, 5),
                        Floats("W", {3}, {0, 0, 0})},
                       kLossTolerance);
}

TEST(CudaLoss, SoftmaxWithLossMatchesCpuWithLabelProbabilities) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "SoftmaxWithLoss" input: "X" input: "T" output: "P" output: "L"
                          arg { name: "label_prob" i: 1 })",
                       {RandomFloats("X", {4, 9}, 6, -2, 2), RandomFloats("T", {4, 9}, 7, 0, 0.2f)},
                       kLossTolerance);
}

TEST(CudaLoss, SoftmaxWithLossGradientMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const HostBlob dloss = Floats("dL", {}, {0.75f});
  for (int32_t d : {10, 1000}) {
    SCOPED_TRACE("classes " + std::to_string(d));
    ExpectCudaMatchesCpu(R"(type: "SoftmaxWithLossGradient" input: "X" input: "T" input: "P"
                            input: "dL" output: "dX" arg { name: "scale" f: 2 })",
                         {RandomFloats("X", {8, d}, 8), Labels("T", {8}, 8, d),
                          RandomFloats("P", {8, d}, 9, 0, 1), dloss},
                         kLossTolerance);
  }
  ExpectCudaMatchesCpu(R"(type: "SoftmaxWithLossGradient" input: "X" input: "T" input: "W"
                          input: "P" input: "dL" output: "dX")",
                       {RandomFloats("X", {5, 3}, 10), Labels("T", {5}, 5, 3),
                        RandomFloats("W", {5}, 11, 0, 3), RandomFloats("P", {5, 3}, 12, 0, 1),
                        dloss},
                       kLossTolerance);
  ExpectCudaMatchesCpu(R"(type: "SoftmaxWithLossGradient" input: "X" input: "T" input: "P"
                          input: "dL" output: "dX" arg { name: "label_prob" i: 1 })",
                       {RandomFloats("X", {4, 6}, 13), RandomFloats("T", {4, 6}, 14, 0, 0.3f),
                        RandomFloats("P", {4, 6}, 15, 0, 1), dloss},
                       kLossTolerance);
}

TEST(CudaLoss, SoftmaxWithLossGivesIdenticalBitsOnEveryRun) {
  BRAID_REQUIRE_GPU();
  const std::string op =
      R"(type: "SoftmaxWithLoss" input: "X" input: "T" output: "P" output: "L")";
  const std::vector<HostBlob> inputs{RandomFloats("X", {64, 1000}, 16, -5, 5),
                                     Labels("T", {64}, 64, 1000)};
  const std::vector<Tensor> first = RunOnDevice(op, inputs, "cuda:0");
  const std::vector<Tensor> second = RunOnDevice(op, inputs, "cuda:0");
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(second.size(), 2u);
  for (int o = 0; o < 2; ++o) {
    EXPECT_EQ(std::memcmp(first[o].data<float>(), second[o].data<float>(), first[o].nbytes()), 0)
        << "output " << o;
  }
}

TEST(CudaLoss, OutOfRangeLabelsGiveNaNInsteadOfAnError) {
  BRAID_REQUIRE_GPU();
  const std::vector<HostBlob> inputs{RandomFloats("X", {3, 4}, 17, 0.1f, 1),
                                     Int32s("T", {3}, {0, 4, 1})};
  std::vector<Tensor> out = RunOnDevice(
      R"(type: "SoftmaxWithLoss" input: "X" input: "T" output: "P" output: "L")", inputs, "cuda:0");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::isnan(out[1].data<float>()[0]));
  out = RunOnDevice(R"(type: "LabelCrossEntropy" input: "X" input: "T" output: "Y")", inputs,
                    "cuda:0");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(std::isnan(out[0].data<float>()[0]));
  EXPECT_TRUE(std::isnan(out[0].data<float>()[1]));
  out = RunOnDevice(R"(type: "Accuracy" input: "X" input: "T" output: "A")", inputs, "cuda:0");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::isnan(out[0].data<float>()[0]));
}

TEST(CudaLoss, LabelCrossEntropyAndGradientMatchCpu) {
  BRAID_REQUIRE_GPU();
  // Row 1's labelled probability is 0: both kernels clamp it to 1e-20 before the log.
  HostBlob x = RandomFloats("X", {6, 10}, 18, 0, 1);
  x.value.mutable_data<float>()[1 * 10 + 2] = 0;
  const HostBlob labels = Int32s("T", {6}, {0, 2, 9, 5, 5, 1});
  ExpectCudaMatchesCpu(R"(type: "LabelCrossEntropy" input: "X" input: "T" output: "Y")",
                       {x, labels}, kLossTolerance);
  ExpectCudaMatchesCpu(R"(type: "LabelCrossEntropyGradient" input: "X" input: "T" input: "dY"
                          output: "dX")",
                       {x, labels, RandomFloats("dY", {6}, 19)}, kLossTolerance);
}

TEST(CudaLoss, AveragedLossAndGradientMatchCpu) {
  BRAID_REQUIRE_GPU();
  for (int64_t n : {1, 37, 100000}) {
    SCOPED_TRACE("elements " + std::to_string(n));
    ExpectCudaMatchesCpu(R"(type: "AveragedLoss" input: "X" output: "Y")",
                         {RandomFloats("X", {n}, 20, 0, 5)}, Tolerance{1e-6, 1e-6});
  }
  ExpectCudaMatchesCpu(R"(type: "AveragedLossGradient" input: "X" input: "dY" output: "dX")",
                       {RandomFloats("X", {7, 3}, 21), Floats("dY", {}, {1.5f})},
                       Tolerance{0, 0});
}

TEST(CudaLoss, AccuracyMatchesCpuWithTopKAndTies) {
  BRAID_REQUIRE_GPU();
  for (int32_t d : {10, 1000}) {
    for (int top_k : {1, 3}) {
      SCOPED_TRACE("classes " + std::to_string(d) + ", top_k " + std::to_string(top_k));
      ExpectCudaMatchesCpu(R"(type: "Accuracy" input: "X" input: "T" output: "A"
                              arg { name: "top_k" i: )" + std::to_string(top_k) + "}",
                           {RandomFloats("X", {50, d}, 22), Labels("T", {50}, 50, d)},
                           Tolerance{0, 0});
    }
  }
  // Scores with ties: a tie ranks the lower class index above.
  ExpectCudaMatchesCpu(R"(type: "Accuracy" input: "X" input: "T" output: "A"
                          arg { name: "top_k" i: 2 })",
                       {Floats("X", {3, 4}, {1, 1, 1, 0, 2, 0, 2, 2, 0, 0, 0, 0}),
                        Int32s("T", {3}, {2, 3, 0})},
                       Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Accuracy" input: "X" input: "T" output: "A")",
                       {RandomFloats("X", {5}, 23), Int32s("T", {1}, {3})}, Tolerance{0, 0});
  const std::vector<Tensor> values = RunOnDevice(
      R"(type: "Accuracy" input: "X" input: "T" output: "A")",
      {Floats("X", {2, 2}, {0, 1, 1, 0}), Int32s("T", {2}, {1, 1})}, "cuda:0");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(ValuesOf(values[0]), std::vector<float>{0.5f});
}

}  // namespace
}  // namespace braid::test
