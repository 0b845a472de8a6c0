// CUDA kernels of ops/math against their CPU kernels (tests/ops/cuda_test_util.h).
#include "ops/cuda_test_util.h"

namespace braid::test {
namespace {

TEST(CudaMath, ReluMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "Relu" input: "X" output: "Y")",
                       {RandomFloats("X", {3, 4, 5}, 1)}, Tolerance{0, 0});
}

TEST(CudaMath, ReluGradientMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "ReluGradient" input: "Y" input: "dY" output: "dX")",
                       {RandomFloats("Y", {7, 9}, 2), RandomFloats("dY", {7, 9}, 3)},
                       Tolerance{0, 0});
}

}  // namespace
}  // namespace braid::test
