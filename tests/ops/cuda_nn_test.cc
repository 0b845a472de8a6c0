// CUDA kernels of ops/nn against their CPU kernels (tests/ops/cuda_test_util.h): Conv and
// ConvGradient (bias, groups, dilation, stride, pads), MaxPool, AveragePool and their gradients,
// SpatialBN (training and is_test), SpatialBNApply and SpatialBNGradient. They skip without a GPU.
//
// Tolerances: convolutions abs 1e-4 + rel 1e-4 (cuDNN's FMA kernels, FFT and Winograd included,
// sum in other orders than oneDNN); pooling and batch norm 1e-5 (a handful of float roundings).
//
// The CudnnConvGlue tests need no GPU: the registry key, algorithm names and the refusal of
// unequal pads are plain host code (built where the CUDA backend is).
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/cuda_test_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/device.h"
#include "runtime/core/workspace.h"

#if BRAID_WITH_CUDA
#include "ops/nn/cudnn_conv.h"
#include "ops/nn/cudnn_pool.h"
#endif

namespace braid::test {
namespace {

constexpr Tolerance kConvTolerance{1e-4, 1e-4};
constexpr Tolerance kNnTolerance{1e-5, 1e-5};

// A Conv (or ConvGradient, when `gradient`) op with the arguments `args` (text of arg { } entries).
std::string ConvText(bool gradient, bool bias, bool dx, const std::string& args) {
  if (!gradient) {
    return std::string(R"(type: "Conv" input: "X" input: "W" )") + (bias ? R"(input: "b" )" : "") +
           R"(output: "Y" )" + args;
  }
  std::string text = R"(type: "ConvGradient" input: "X" input: "W" input: "dY" output: "dW" )";
  if (bias) text += R"(output: "db" )";
  if (dx) text += R"(output: "dX" )";
  if (!bias) text += R"(arg { name: "no_bias" i: 1 } )";
  return text + args;
}

struct ConvCase {
  std::vector<int64_t> x, w, y;  // y: the Conv's output shape, for dY
  std::string args;
};

void ExpectConvMatches(const ConvCase& c, bool bias, uint64_t seed) {
  std::vector<HostBlob> in{RandomFloats("X", c.x, seed), RandomFloats("W", c.w, seed + 1)};
  if (bias) in.push_back(RandomFloats("b", {c.w[0]}, seed + 2));
  ExpectCudaMatchesCpu(ConvText(false, bias, false, c.args), in, kConvTolerance);
}

void ExpectConvGradientMatches(const ConvCase& c, bool bias, bool dx, uint64_t seed) {
  ExpectCudaMatchesCpu(ConvText(true, bias, dx, c.args),
                       {RandomFloats("X", c.x, seed), RandomFloats("W", c.w, seed + 1),
                        RandomFloats("dY", c.y, seed + 2)},
                       kConvTolerance);
}

const ConvCase kPadded{{2, 3, 8, 7}, {4, 3, 3, 3}, {2, 4, 8, 7}, R"(arg { name: "pad" i: 1 })"};
const ConvCase kStrided{{2, 4, 9, 9}, {6, 4, 3, 3}, {2, 6, 4, 4}, R"(arg { name: "stride" i: 2 })"};
const ConvCase kGrouped{{2, 6, 7, 7},
                        {4, 3, 3, 3},
                        {2, 4, 7, 7},
                        R"(arg { name: "group" i: 2 } arg { name: "pad" i: 1 })"};
const ConvCase kDilated{{1, 4, 10, 9},
                        {4, 2, 3, 3},
                        {1, 4, 8, 5},
                        R"(arg { name: "dilation_h" i: 2 } arg { name: "dilation_w" i: 3 }
                           arg { name: "group" i: 2 } arg { name: "pad" i: 1 })"};
// 5x1 kernel, pads differ between dims (equal at both ends of each), stride differs per dim.
const ConvCase kRectangular{{2, 3, 9, 6},
                            {5, 3, 5, 1},
                            {2, 5, 5, 4},
                            R"(arg { name: "pads" ints: [2, 1, 2, 1] }
                               arg { name: "strides" ints: [2, 2] })"};
const ConvCase kPointwise{{3, 8, 5, 5}, {16, 8, 1, 1}, {3, 16, 5, 5}, ""};

TEST(CudaNn, ConvMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectConvMatches(kPadded, /*bias=*/true, 10);
  ExpectConvMatches(kPadded, /*bias=*/false, 11);
  ExpectConvMatches(kStrided, /*bias=*/false, 12);
  ExpectConvMatches(kGrouped, /*bias=*/true, 13);
  ExpectConvMatches(kDilated, /*bias=*/false, 14);
  ExpectConvMatches(kRectangular, /*bias=*/true, 15);
  ExpectConvMatches(kPointwise, /*bias=*/true, 16);
}

TEST(CudaNn, ConvGradientMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectConvGradientMatches(kPadded, /*bias=*/true, /*dx=*/true, 20);
  ExpectConvGradientMatches(kPadded, /*bias=*/false, /*dx=*/true, 21);
  ExpectConvGradientMatches(kStrided, /*bias=*/true, /*dx=*/true, 22);
  ExpectConvGradientMatches(kGrouped, /*bias=*/false, /*dx=*/true, 23);
  ExpectConvGradientMatches(kDilated, /*bias=*/true, /*dx=*/true, 24);
  ExpectConvGradientMatches(kRectangular, /*bias=*/false, /*dx=*/true, 25);
  ExpectConvGradientMatches(kPointwise, /*bias=*/true, /*dx=*/true, 26);
}

TEST(CudaNn, ConvGradientWithoutDxMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectConvGradientMatches(kPadded, /*bias=*/true, /*dx=*/false, 30);    // dW, db
  ExpectConvGradientMatches(kGrouped, /*bias=*/false, /*dx=*/false, 31);  // dW alone
}

// An empty batch: Conv writes nothing, ConvGradient zeroes dW and db (cuDNN refuses empty
// tensors, so neither may build a descriptor for one).
TEST(CudaNn, ConvAndGradientOfAnEmptyBatchMatchCpu) {
  BRAID_REQUIRE_GPU();
  const ConvCase empty{{0, 3, 8, 7}, {4, 3, 3, 3}, {0, 4, 8, 7}, R"(arg { name: "pad" i: 1 })"};
  ExpectConvMatches(empty, /*bias=*/true, 40);
  ExpectConvGradientMatches(empty, /*bias=*/true, /*dx=*/true, 41);
  ExpectConvGradientMatches(empty, /*bias=*/false, /*dx=*/false, 42);
}

TEST(CudaNn, ConvWithUnequalPadsIsRefusedOnCuda) {
  BRAID_REQUIRE_GPU();
  const Device cuda = ParseDevice("cuda:0");
  Workspace ws;
  for (const HostBlob& in :
       {RandomFloats("X", {1, 2, 5, 5}, 1), RandomFloats("W", {2, 2, 3, 3}, 2)}) {
    Tensor* blob = ws.CreateBlob(in.name);
    *blob = Tensor(cuda);
    blob->CopyFrom(in.value);
  }
  const Status s = ws.RunNetOnce(NetOf({R"(type: "Conv" input: "X" input: "W" output: "Y"
      arg { name: "pads" ints: [1, 0, 0, 0] } device_option { device_type: 1 device_id: 0 })"}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("equal begin and end pads"), std::string::npos) << s.ToString();
}

// Pooling: `type` over X with `args`; the gradient gets the CPU forward's Y.
void ExpectPoolMatches(const std::string& type, const std::vector<int64_t>& x,
                       const std::string& args, uint64_t seed) {
  const HostBlob xb = RandomFloats("X", x, seed);
  const std::string forward = "type: \"" + type + "\" input: \"X\" output: \"Y\" " + args;
  ExpectCudaMatchesCpu(forward, {xb}, kNnTolerance);
  const std::vector<Tensor> y = RunOnDevice(forward, {xb}, "cpu:0");
  ASSERT_EQ(y.size(), 1u);
  const std::string gradient =
      "type: \"" + type + "Gradient\" input: \"X\" input: \"Y\" input: \"dY\" output: \"dX\" " +
      args;
  ExpectCudaMatchesCpu(gradient, {xb, {"Y", y[0]}, RandomFloats("dY", y[0].shape(), seed + 1)},
                       kNnTolerance);
}

TEST(CudaNn, MaxPoolAndGradientMatchCpu) {
  BRAID_REQUIRE_GPU();
  ExpectPoolMatches("MaxPool", {2, 3, 8, 8},
                    R"(arg { name: "kernel" i: 2 } arg { name: "stride" i: 2 })", 40);
  ExpectPoolMatches(
      "MaxPool", {2, 3, 9, 7},
      R"(arg { name: "kernel" i: 3 } arg { name: "stride" i: 2 } arg { name: "pad" i: 1 })", 41);
  ExpectPoolMatches("MaxPool", {2, 4, 5, 6}, R"(arg { name: "global_pooling" i: 1 })", 42);
}

TEST(CudaNn, AveragePoolAndGradientMatchCpu) {
  BRAID_REQUIRE_GPU();
  const std::string window =
      R"(arg { name: "kernel" i: 3 } arg { name: "stride" i: 2 } arg { name: "pad" i: 1 } )";
  ExpectPoolMatches("AveragePool", {2, 3, 9, 7}, window, 50);  // padding excluded (default)
  ExpectPoolMatches("AveragePool", {2, 3, 9, 7},
                    window + R"(arg { name: "count_include_pad" i: 1 })", 51);
  ExpectPoolMatches("AveragePool", {2, 4, 5, 6}, R"(arg { name: "global_pooling" i: 1 })", 52);
  ExpectPoolMatches("AveragePool", {1, 2, 6, 8},
                    R"(arg { name: "kernel_h" i: 2 } arg { name: "kernel_w" i: 3 }
                       arg { name: "stride_h" i: 1 } arg { name: "stride_w" i: 2 })",
                    53);
}

std::vector<HostBlob> BnInputs(const std::vector<int64_t>& x, uint64_t seed) {
  const int64_t c = x[1];
  return {RandomFloats("X", x, seed, -2.f, 3.f), RandomFloats("s", {c}, seed + 1, 0.5f, 1.5f),
          RandomFloats("b", {c}, seed + 2), RandomFloats("rm", {c}, seed + 3),
          RandomFloats("rv", {c}, seed + 4, 0.5f, 2.f)};
}

TEST(CudaNn, SpatialBNTrainingMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::string op = R"(type: "SpatialBN" input: "X" input: "s" input: "b" input: "rm"
      input: "rv" output: "Y" output: "rm" output: "rv" output: "sm" output: "siv"
      arg { name: "momentum" f: 0.8 } arg { name: "epsilon" f: 1e-3 })";
  ExpectCudaMatchesCpu(op, BnInputs({4, 3, 5, 6}, 60), kNnTolerance);
  ExpectCudaMatchesCpu(op, BnInputs({3, 5, 7}, 61), kNnTolerance);  // [N, C, L]
  ExpectCudaMatchesCpu(op, BnInputs({8, 4}, 62), kNnTolerance);     // [N, C]
}

TEST(CudaNn, SpatialBNInPlaceTrainingMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "SpatialBN" input: "X" input: "s" input: "b" input: "rm"
      input: "rv" output: "X" output: "rm" output: "rv" output: "sm" output: "siv")",
                       BnInputs({2, 6, 4, 4}, 63), kNnTolerance);
}

TEST(CudaNn, SpatialBNInferenceMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "SpatialBN" input: "X" input: "s" input: "b" input: "rm"
      input: "rv" output: "Y" arg { name: "is_test" i: 1 } arg { name: "epsilon" f: 1e-4 })",
                       BnInputs({3, 4, 5, 5}, 64), kNnTolerance);
}

TEST(CudaNn, SpatialBNApplyMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::vector<int64_t> x{2, 3, 4, 5};
  std::vector<HostBlob> in{RandomFloats("X", x, 70), RandomFloats("s", {3}, 71, 0.5f, 1.5f),
                           RandomFloats("b", {3}, 72), RandomFloats("m", {3}, 73),
                           RandomFloats("is", {3}, 74, 0.5f, 2.f)};
  const std::string base = R"(type: "SpatialBNApply" input: "X" input: "s" input: "b" input: "m"
      input: "is" )";
  ExpectCudaMatchesCpu(base + R"(output: "Y")", in, kNnTolerance);
  ExpectCudaMatchesCpu(base + R"(output: "X" arg { name: "relu" i: 1 })", in, kNnTolerance);
  in.push_back(RandomFloats("r", x, 75));
  ExpectCudaMatchesCpu(base + R"(input: "r" output: "r" arg { name: "relu" i: 1 })", in,
                       kNnTolerance);
}

TEST(CudaNn, SpatialBNGradientMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::string op = R"(type: "SpatialBNGradient" input: "X" input: "s" input: "dY"
      input: "sm" input: "siv" output: "dX" output: "ds" output: "db"
      arg { name: "epsilon" f: 1e-3 })";
  for (const std::vector<int64_t>& x : {std::vector<int64_t>{4, 3, 5, 6}, {3, 5, 7}}) {
    const int64_t c = x[1];
    ExpectCudaMatchesCpu(op,
                         {RandomFloats("X", x, 80), RandomFloats("s", {c}, 81, 0.5f, 1.5f),
                          RandomFloats("dY", x, 82), RandomFloats("sm", {c}, 83, -0.2f, 0.2f),
                          RandomFloats("siv", {c}, 84, 1.f, 2.f)},
                         kNnTolerance);
  }
}

#if BRAID_WITH_CUDA

ShapeInfo Float32(std::vector<int64_t> dims) { return {DType::kFloat32, std::move(dims), true}; }

TEST(CudnnConvGlue, AlgorithmKeyIsDeterministicAndNamesWhatAffectsTheChoice) {
  const OperatorDef conv = ParseOp(R"(type: "Conv" input: "X" input: "W" output: "Y"
      arg { name: "pad" i: 1 })");
  const CudnnConvProblem p =
      CudnnConvProblemOf(conv, {Float32({2, 4, 8, 8}), Float32({6, 4, 3, 3})});
  const std::string gpu = "sm_90 NVIDIA H100 80GB HBM3";
  const std::string forward = CudnnConvAlgorithmKey(p, CudnnConvDirection::kForward, gpu, 91900);
  EXPECT_EQ(forward, CudnnConvAlgorithmKey(p, CudnnConvDirection::kForward, gpu, 91900));
  EXPECT_EQ(forward.rfind("Conv/forward|", 0), 0u) << forward;
  EXPECT_EQ(forward.find('\t'), std::string::npos);
  EXPECT_NE(forward.find("x=2,4,8,8"), std::string::npos) << forward;
  EXPECT_EQ(forward.find("cuda:"), std::string::npos) << "no device id: " << forward;

  CudnnConvProblem grouped = p, dilated = p, biased = p;
  grouped.group = 2;
  dilated.dilation = {2, 1};
  biased.has_bias = true;
  const std::vector<std::string> keys{
      forward,
      CudnnConvAlgorithmKey(p, CudnnConvDirection::kBackwardData, gpu, 91900),
      CudnnConvAlgorithmKey(p, CudnnConvDirection::kBackwardFilter, gpu, 91900),
      CudnnConvAlgorithmKey(grouped, CudnnConvDirection::kForward, gpu, 91900),
      CudnnConvAlgorithmKey(dilated, CudnnConvDirection::kForward, gpu, 91900),
      CudnnConvAlgorithmKey(biased, CudnnConvDirection::kForward, gpu, 91900),
      CudnnConvAlgorithmKey(p, CudnnConvDirection::kForward, "sm_80 NVIDIA A100-SXM4-40GB", 91900),
      CudnnConvAlgorithmKey(p, CudnnConvDirection::kForward, gpu, 90100),
      CudnnConvAlgorithmKey(p, CudnnConvDirection::kForward, gpu, 91900, /*tf32=*/true)};
  EXPECT_NE(forward.find("|math=fma|"), std::string::npos) << forward;
  EXPECT_NE(keys.back().find("|math=tf32|"), std::string::npos) << keys.back();
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = i + 1; j < keys.size(); ++j) EXPECT_NE(keys[i], keys[j]) << i << " " << j;
  }
}

TEST(CudnnConvGlue, AKeyHasNoSeparatorsWhateverTheGpuIsCalled) {
  const CudnnConvProblem p =
      CudnnConvProblemOf(ParseOp(R"(type: "Conv" input: "X" input: "W" output: "Y")"),
                         {Float32({1, 1, 3, 3}), Float32({1, 1, 1, 1})});
  const std::string key = CudnnConvAlgorithmKey(p, CudnnConvDirection::kForward, "odd\tname\n", 1);
  EXPECT_EQ(key.find_first_of("\t\n\r"), std::string::npos) << key;
}

TEST(CudnnConvGlue, AlgorithmNamesRoundTripPerDirection) {
  const std::pair<CudnnConvDirection, int> directions[] = {
      {CudnnConvDirection::kForward, CUDNN_CONVOLUTION_FWD_ALGO_COUNT},
      {CudnnConvDirection::kBackwardData, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT},
      {CudnnConvDirection::kBackwardFilter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT}};
  for (const auto& [direction, count] : directions) {
    for (int algo = 0; algo < count; ++algo) {
      const std::string name = CudnnConvAlgorithmName(direction, algo);
      EXPECT_EQ(CudnnConvAlgorithmNamed(direction, name), algo) << name;
    }
    EXPECT_EQ(CudnnConvAlgorithmNamed(direction, "direct_oneDNN"), -1);
  }
  EXPECT_EQ(CudnnConvAlgorithmNamed(CudnnConvDirection::kForward, "algo_1"), -1);
  EXPECT_TRUE(CudnnConvAlgorithmIsNondeterministic(CudnnConvDirection::kBackwardFilter, 0));
  EXPECT_TRUE(CudnnConvAlgorithmIsNondeterministic(CudnnConvDirection::kBackwardFilter, 3));
  EXPECT_TRUE(CudnnConvAlgorithmIsNondeterministic(CudnnConvDirection::kBackwardData, 0));
  EXPECT_FALSE(CudnnConvAlgorithmIsNondeterministic(CudnnConvDirection::kBackwardData, 1));
}

TEST(CudnnConvGlue, ProblemTakesTheCpuOpsWindowAndRefusesUnequalPads) {
  const CudnnConvProblem p =
      CudnnConvProblemOf(ParseOp(R"(type: "Conv" input: "X" input: "W" input: "b" output: "Y"
          arg { name: "pads" ints: [2, 1, 2, 1] } arg { name: "stride_h" i: 2 }
          arg { name: "stride_w" i: 1 } arg { name: "dilation_h" i: 1 }
          arg { name: "dilation_w" i: 2 } arg { name: "group" i: 2 })"),
                         {Float32({2, 4, 9, 9}), Float32({6, 2, 3, 3}), Float32({6})});
  EXPECT_EQ(p.pad, (Int64Pair{2, 1}));
  EXPECT_EQ(p.stride, (Int64Pair{2, 1}));
  EXPECT_EQ(p.dilation, (Int64Pair{1, 2}));
  EXPECT_EQ(p.group, 2);
  EXPECT_TRUE(p.has_bias);
  EXPECT_EQ(p.y_dims, (std::vector<int64_t>{2, 6, 6, 7}));
  try {
    CudnnConvProblemOf(ParseOp(R"(type: "Conv" input: "X" input: "W" output: "Y"
                                  arg { name: "pads" ints: [1, 0, 0, 0] })"),
                       {Float32({1, 2, 5, 5}), Float32({2, 2, 3, 3})});
    ADD_FAILURE() << "unequal pads were accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("pad_t=1 pad_b=0"), std::string::npos)
        << e.status().message();
  }
}

TEST(CudnnConvGlue, GradientProblemReadsTheOutputsLikeTheCpuOp) {
  CudnnConvGradientOutputs outputs;
  const std::vector<ShapeInfo> in{Float32({2, 3, 6, 6}), Float32({4, 3, 3, 3}),
                                  Float32({2, 4, 4, 4})};
  CudnnConvProblem p = CudnnConvGradientProblemOf(
      ParseOp(R"(type: "ConvGradient" input: "X" input: "W" input: "dY" output: "dW"
                 output: "dX" arg { name: "no_bias" i: 1 })"),
      in, &outputs);
  EXPECT_FALSE(p.has_bias);
  EXPECT_EQ(outputs.dbias, -1);
  EXPECT_EQ(outputs.dx, 1);
  p = CudnnConvGradientProblemOf(ParseOp(R"(type: "ConvGradient" input: "X" input: "W"
                                            input: "dY" output: "dW" output: "db")"),
                                 in, &outputs);
  EXPECT_TRUE(p.has_bias);
  EXPECT_EQ(outputs.dbias, 1);
  EXPECT_EQ(outputs.dx, -1);
}

TEST(CudnnPoolGlue, ModesFollowTheOpAndCountIncludePad) {
  const std::vector<ShapeInfo> x{Float32({1, 2, 6, 6})};
  const std::string window = R"(arg { name: "kernel" i: 3 } arg { name: "pad" i: 1 })";
  EXPECT_EQ(CudnnPoolProblemOf(ParseOp(R"(type: "MaxPool" input: "X" output: "Y" )" + window), x,
                               false, false)
                .mode,
            CUDNN_POOLING_MAX_DETERMINISTIC);
  EXPECT_EQ(CudnnPoolProblemOf(ParseOp(R"(type: "AveragePool" input: "X" output: "Y" )" + window),
                               x, true, false)
                .mode,
            CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
  EXPECT_EQ(CudnnPoolProblemOf(ParseOp(R"(type: "AveragePool" input: "X" output: "Y" )" + window +
                                       R"( arg { name: "count_include_pad" i: 1 })"),
                               x, true, false)
                .mode,
            CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING);
  EXPECT_THROW(CudnnPoolProblemOf(ParseOp(R"(type: "MaxPool" input: "X" output: "Y"
                                             arg { name: "kernel" i: 3 }
                                             arg { name: "pads" ints: [0, 0, 1, 1] })"),
                                  x, false, false),
               Error);
}

#endif  // BRAID_WITH_CUDA

}  // namespace
}  // namespace braid::test
