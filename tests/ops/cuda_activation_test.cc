// CUDA kernels of ops/activation against their CPU kernels (tests/ops/cuda_test_util.h).
#include <string>

#include "ops/cuda_test_util.h"

namespace braid::test {
namespace {

// expf and tanhf on the GPU are within 2 ulp of the host's; sums run in another order.
constexpr Tolerance kTranscendental{1e-6, 1e-5};

TEST(CudaActivation, SigmoidAndTanhMatchCpu) {
  BRAID_REQUIRE_GPU();
  for (const char* type : {"Sigmoid", "Tanh"}) {
    SCOPED_TRACE(type);
    ExpectCudaMatchesCpu(std::string("type: \"") + type + R"(" input: "X" output: "Y")",
                         {RandomFloats("X", {7, 33}, 1, -8.f, 8.f)}, kTranscendental);
    ExpectCudaMatchesCpu(std::string("type: \"") + type + R"(" input: "X" output: "X")",
                         {RandomFloats("X", {5}, 2, -8.f, 8.f)}, kTranscendental);
  }
}

TEST(CudaActivation, OutputGradientsMatchCpu) {
  BRAID_REQUIRE_GPU();
  for (const char* type : {"SigmoidGradient", "TanhGradient"}) {
    SCOPED_TRACE(type);
    const std::string op = std::string("type: \"") + type + R"(" input: "Y" input: "dY")";
    const std::vector<HostBlob> inputs{RandomFloats("Y", {9, 13}, 3, 0.f, 1.f),
                                       RandomFloats("dY", {9, 13}, 4)};
    ExpectCudaMatchesCpu(op + R"( output: "dX")", inputs, Tolerance{1e-7, 1e-6});
    ExpectCudaMatchesCpu(op + R"( output: "dY")", inputs, Tolerance{1e-7, 1e-6});  // in place
  }
}

TEST(CudaActivation, SoftmaxMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::string op = R"(type: "Softmax" input: "X" output: "Y")";
  // 1000 classes (not a multiple of the block), 37 rows; a row shorter than a block; large logits.
  ExpectCudaMatchesCpu(op, {RandomFloats("X", {37, 1000}, 5, -10.f, 10.f)}, kTranscendental);
  ExpectCudaMatchesCpu(op, {RandomFloats("X", {3, 5}, 6, 80.f, 100.f)}, kTranscendental);
  ExpectCudaMatchesCpu(op + R"( arg { name: "axis" i: 2 })", {RandomFloats("X", {2, 3, 7}, 7)},
                       kTranscendental);
  ExpectCudaMatchesCpu(op + R"( arg { name: "axis" i: 0 })", {RandomFloats("X", {3, 4, 5}, 8)},
                       kTranscendental);
  // More rows than blocks: blocks loop over rows.
  ExpectCudaMatchesCpu(op, {RandomFloats("X", {5000, 3}, 9)}, kTranscendental);
  ExpectCudaMatchesCpu(R"(type: "Softmax" input: "X" output: "X")",
                       {RandomFloats("X", {4, 300}, 10)}, kTranscendental);
}

TEST(CudaActivation, SoftmaxGradientMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::string op = R"(type: "SoftmaxGradient" input: "Y" input: "dY")";
  const std::vector<HostBlob> inputs{RandomFloats("Y", {37, 1000}, 11, 0.f, 0.002f),
                                     RandomFloats("dY", {37, 1000}, 12)};
  ExpectCudaMatchesCpu(op + R"( output: "dX")", inputs, kTranscendental);
  ExpectCudaMatchesCpu(op + R"( output: "dY")", inputs, kTranscendental);  // in place
  ExpectCudaMatchesCpu(
      op + R"( output: "dX" arg { name: "axis" i: 2 })",
      {RandomFloats("Y", {2, 3, 7}, 13, 0.f, 1.f), RandomFloats("dY", {2, 3, 7}, 14)},
      kTranscendental);
}

}  // namespace
}  // namespace braid::test
