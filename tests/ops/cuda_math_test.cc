// CUDA kernels of ops/math against their CPU kernels (tests/ops/cuda_test_util.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ops/common/cublas_library.h"
#include "ops/cuda_test_util.h"

namespace braid::test {
namespace {

// Float32 products and sums in another order than the CPU's.
constexpr Tolerance kFloatSums{1e-5, 1e-4};

HostBlob Int64s(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
  Tensor t(DType::kInt64, std::move(dims));
  std::copy(values.begin(), values.end(), t.mutable_data<int64_t>());
  return {name, t};
}

// cuBLAS is not linked but loaded when first used (ops/common/cublas_library.h); loading and
// resolving needs no GPU, only the toolkit's library.
TEST(CudaMath, CublasIsLoadedOnFirstUse) {
  const CublasLibrary& cublas = Cublas();
  EXPECT_NE(cublas.create, nullptr);
  EXPECT_NE(cublas.set_stream, nullptr);
  EXPECT_NE(cublas.set_workspace, nullptr);
  EXPECT_NE(cublas.set_math_mode, nullptr);
  EXPECT_NE(cublas.set_pointer_mode, nullptr);
  EXPECT_NE(cublas.sgemm, nullptr);
  EXPECT_STREQ(cublas.status_string(CUBLAS_STATUS_NOT_INITIALIZED),
               "the library was not initialized");
  EXPECT_EQ(&Cublas(), &cublas);
}

TEST(CudaMath, ReluMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "Relu" input: "X" output: "Y")", {RandomFloats("X", {3, 4, 5}, 1)},
                       Tolerance{0, 0});
}

TEST(CudaMath, ReluGradientMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "ReluGradient" input: "Y" input: "dY" output: "dX")",
                       {RandomFloats("Y", {7, 9}, 2), RandomFloats("dY", {7, 9}, 3)},
                       Tolerance{0, 0});
}

// Relu is std::max(x, 0.f) on the CPU: NaN stays NaN (a diverging net must look the same on both
// devices) and -0 stays -0; ExpectCudaMatchesCpu cannot compare NaNs, so the bits are checked.
TEST(CudaMath, ReluPassesNaNAndNegativeZeroLikeCpu) {
  BRAID_REQUIRE_GPU();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<HostBlob> inputs{Floats("X", {6}, {nan, -0.f, 0.f, -inf, inf, -2.f})};
  const std::string op = R"(type: "Relu" input: "X" output: "Y")";
  const std::vector<Tensor> cpu = RunOnDevice(op, inputs, "cpu:0");
  const std::vector<Tensor> cuda = RunOnDevice(op, inputs, "cuda:0");
  ASSERT_EQ(cpu.size(), 1u);
  ASSERT_EQ(cuda.size(), 1u);
  const float* want = cpu[0].data<float>();
  const float* got = cuda[0].data<float>();
  EXPECT_TRUE(std::isnan(got[0]));
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(std::isnan(got[i]), std::isnan(want[i])) << "element " << i;
    if (!std::isnan(want[i])) {
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "element " << i;
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    }
  }
}

TEST(CudaMath, AddAndMulOfOneShapeMatchCpu) {
  BRAID_REQUIRE_GPU();
  for (const char* type : {"Add", "Mul"}) {
    ExpectCudaMatchesCpu(std::string("type: \"") + type + R"(" input: "A" input: "B" output: "C")",
                         {RandomFloats("A", {3, 5, 7}, 4), RandomFloats("B", {3, 5, 7}, 5)},
                         Tolerance{0, 0});
  }
}

TEST(CudaMath, AddAndMulBroadcastLikeCpu) {
  BRAID_REQUIRE_GPU();
  for (const char* type : {"Add", "Mul"}) {
    const std::string op =
        std::string("type: \"") + type + R"(" input: "A" input: "B" output: "C")";
    // Trailing dims (the default axis), a middle run from axis 1, B's trailing 1-dims ignored.
    ExpectCudaMatchesCpu(op + R"( arg { name: "broadcast" i: 1 })",
                         {RandomFloats("A", {2, 3, 4}, 6), RandomFloats("B", {3, 4}, 7)},
                         Tolerance{0, 0});
    ExpectCudaMatchesCpu(op + R"( arg { name: "broadcast" i: 1 } arg { name: "axis" i: 1 })",
                         {RandomFloats("A", {2, 3, 4}, 8), RandomFloats("B", {3}, 9)},
                         Tolerance{0, 0});
    ExpectCudaMatchesCpu(op + R"( arg { name: "broadcast" i: 1 } arg { name: "axis" i: 0 })",
                         {RandomFloats("A", {5, 3, 4}, 10), RandomFloats("B", {5, 1}, 11)},
                         Tolerance{0, 0});
  }
}

TEST(CudaMath, AddAndMulOfIntegersMatchCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(
      R"(type: "Add" input: "A" input: "B" output: "C" arg { name: "broadcast" i: 1 })",
      {Int32s("A", {2, 3}, {1, -2, 3, 40, 5, -6}), Int32s("B", {3}, {7, 8, -9})}, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Mul" input: "A" input: "B" output: "C")",
                       {Int64s("A", {4}, {1, -2, 3000000000, 4}), Int64s("B", {4}, {5, 6, 3, -8})},
                       Tolerance{0, 0});
}

TEST(CudaMath, AddInPlaceMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(
      R"(type: "Add" input: "A" input: "B" output: "A" arg { name: "broadcast" i: 1 })",
      {RandomFloats("A", {4, 6}, 12), RandomFloats("B", {6}, 13)}, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Add" input: "A" input: "B" output: "B")",
                       {RandomFloats("A", {4, 6}, 14), RandomFloats("B", {4, 6}, 15)},
                       Tolerance{0, 0});
}

TEST(CudaMath, MulGradientMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::string op = R"(type: "MulGradient" input: "A" input: "B" input: "dC" output: "dA"
                            output: "dB")";
  ExpectCudaMatchesCpu(op,
                       {RandomFloats("A", {3, 5}, 16), RandomFloats("B", {3, 5}, 17),
                        RandomFloats("dC", {3, 5}, 18)},
                       kFloatSums);
  // dB sums 8 * 40 = 320 terms each: the one-block-per-element reduction.
  ExpectCudaMatchesCpu(op + R"( arg { name: "broadcast" i: 1 } arg { name: "axis" i: 1 })",
                       {RandomFloats("A", {8, 3, 40}, 19), RandomFloats("B", {3}, 20),
                        RandomFloats("dC", {8, 3, 40}, 21)},
                       kFloatSums);
}

TEST(CudaMath, SumOfOneToTenInputsMatchesCpu) {
  BRAID_REQUIRE_GPU();
  for (int n : {1, 2, 3, 8, 10}) {  // 10: a second launch adds inputs 8 and 9
    std::string op = R"(type: "Sum" output: "Y")";
    std::vector<HostBlob> inputs;
    for (int i = 0; i < n; ++i) {
      const std::string name = "X" + std::to_string(i);
      op += " input: \"" + name + "\"";
      inputs.push_back(RandomFloats(name, {6, 7}, 30 + i));
    }
    SCOPED_TRACE(n);
    ExpectCudaMatchesCpu(op, inputs, Tolerance{0, 0});  // the same additions in the same order
  }
}

TEST(CudaMath, SumInPlaceAndOfIntegersMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "Sum" input: "X0" input: "X1" input: "X2" output: "X0")",
                       {RandomFloats("X0", {5, 3}, 40), RandomFloats("X1", {5, 3}, 41),
                        RandomFloats("X2", {5, 3}, 42)},
                       Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Sum" input: "X0" input: "X1" output: "Y")",
                       {Int32s("X0", {3}, {1, 2, 3}), Int32s("X1", {3}, {-4, 50, 6})},
                       Tolerance{0, 0});
}

TEST(CudaMath, SumReduceLikeMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::string op = R"(type: "SumReduceLike" input: "A" input: "B" output: "C"
                            arg { name: "broadcast" i: 1 })";
  ExpectCudaMatchesCpu(op, {RandomFloats("A", {4, 3, 5}, 43), RandomFloats("B", {3, 5}, 44)},
                       kFloatSums);
  // 64 * 50 terms per element: the block reduction.
  ExpectCudaMatchesCpu(op + R"( arg { name: "axis" i: 1 })",
                       {RandomFloats("A", {64, 6, 50}, 45), RandomFloats("B", {6}, 46)},
                       kFloatSums);
  ExpectCudaMatchesCpu(R"(type: "SumReduceLike" input: "A" input: "B" output: "C")",
                       {RandomFloats("A", {4, 3}, 47), RandomFloats("B", {4, 3}, 48)},
                       Tolerance{0, 0});
}

TEST(CudaMath, CopyOnOneDeviceMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "Copy" input: "X" output: "Y")", {RandomFloats("X", {3, 17}, 49)},
                       Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Copy" input: "X" output: "Y")", {Int32s("X", {4}, {1, 2, 3, 4})},
                       Tolerance{0, 0});
}

TEST(CudaMath, FCMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::string op = R"(type: "FC" input: "X" input: "W" input: "b" output: "Y")";
  ExpectCudaMatchesCpu(
      op,
      {RandomFloats("X", {5, 7}, 50), RandomFloats("W", {3, 7}, 51), RandomFloats("b", {3}, 52)},
      kFloatSums);
  ExpectCudaMatchesCpu(op,
                       {RandomFloats("X", {33, 5, 13}, 53), RandomFloats("W", {17, 65}, 54),
                        RandomFloats("b", {17}, 55)},
                       kFloatSums);
  ExpectCudaMatchesCpu(
      op + R"( arg { name: "axis" i: 2 })",
      {RandomFloats("X", {2, 3, 4}, 56), RandomFloats("W", {5, 4}, 57), RandomFloats("b", {5}, 58)},
      kFloatSums);
  ExpectCudaMatchesCpu(op + R"( arg { name: "axis_w" i: 2 })",
                       {RandomFloats("X", {6, 8}, 59), RandomFloats("W", {2, 3, 4, 2}, 60),
                        RandomFloats("b", {6}, 61)},
                       kFloatSums);
}

TEST(CudaMath, FCGradientMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::string op = R"(type: "FCGradient" input: "X" input: "W" input: "dY" output: "dW"
                            output: "db")";
  const std::vector<HostBlob> inputs{RandomFloats("X", {33, 65}, 62),
                                     RandomFloats("W", {17, 65}, 63),
                                     RandomFloats("dY", {33, 17}, 64)};
  ExpectCudaMatchesCpu(op, inputs, kFloatSums);
  ExpectCudaMatchesCpu(op + R"( output: "dX")", inputs, kFloatSums);
  ExpectCudaMatchesCpu(op + R"( output: "dX" arg { name: "axis" i: 2 })",
                       {RandomFloats("X", {2, 3, 4}, 65), RandomFloats("W", {5, 4}, 66),
                        RandomFloats("dY", {2, 3, 5}, 67)},
                       kFloatSums);
  // 300 rows: db's block reduction.
  ExpectCudaMatchesCpu(op + R"( output: "dX")",
                       {RandomFloats("X", {300, 9}, 68), RandomFloats("W", {4, 9}, 69),
                        RandomFloats("dY", {300, 4}, 70)},
                       kFloatSums);
}

}  // namespace
}  // namespace braid::test
