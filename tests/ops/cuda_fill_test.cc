// CUDA kernels of ops/fill against their CPU kernels (tests/ops/cuda_test_util.h). Random fills
// draw from cuRAND, not the CPU's generator, so their values are compared statistically (sample
// mean, standard deviation, range) and their type and shape exactly; a fill with the same seed
// gives the same values on every run.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "ops/cuda_test_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/device.h"
#include "runtime/core/workspace.h"

namespace braid::test {
namespace {

std::vector<float> ValuesOf(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

// The fill's output on cuda:0 (after checking its type and shape against the CPU kernel's).
std::vector<float> CudaSamples(const std::string& op) {
  ExpectCudaMatchesCpu(op, {}, Tolerance{}, {"Y"});
  const std::vector<Tensor> out = RunOnDevice(op, {}, "cuda:0");
  if (out.size() != 1) return {};
  return ValuesOf(out[0]);
}

void ExpectWithin(const std::vector<float>& v, float lo, float hi) {
  ASSERT_FALSE(v.empty());
  EXPECT_GE(*std::min_element(v.begin(), v.end()), lo);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), hi);
}

TEST(CudaFill, ConstantFillMatchesCpuForEveryType) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "ConstantFill" output: "Y" arg { name: "shape" ints: 3 ints: 5 }
                          arg { name: "value" f: 1.5 })",
                       {}, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "ConstantFill" output: "Y" arg { name: "shape" ints: 7 }
                          arg { name: "value" i: 7 } arg { name: "dtype" i: 2 })",
                       {}, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "ConstantFill" output: "iter" arg { name: "shape" ints: 1 }
                          arg { name: "value" i: 5000000000 } arg { name: "dtype" i: 10 })",
                       {}, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "ConstantFill" input: "X" output: "Y" arg { name: "value" f: -2 }
                          arg { name: "extra_shape" ints: 2 })",
                       {RandomFloats("X", {4, 3}, 1)}, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "ConstantFill" output: "Y")", {}, Tolerance{0, 0});
  const std::vector<Tensor> f64 = RunOnDevice(
      R"(type: "ConstantFill" output: "Y" arg { name: "shape" ints: 3 } arg { name: "value" f: 2.5 }
         arg { name: "dtype" i: 13 })",
      {}, "cuda:0");
  ASSERT_EQ(f64.size(), 1u);
  EXPECT_EQ(std::vector<double>(f64[0].data<double>(), f64[0].data<double>() + 3),
            std::vector<double>(3, 2.5));
  const std::vector<Tensor> u8 = RunOnDevice(
      R"(type: "ConstantFill" output: "Y" arg { name: "shape" ints: 2 } arg { name: "value" i: 200 }
         arg { name: "dtype" i: 6 })",
      {}, "cuda:0");
  ASSERT_EQ(u8.size(), 1u);
  EXPECT_EQ(u8[0].data<uint8_t>()[0], 200);
  EXPECT_EQ(u8[0].data<uint8_t>()[1], 200);
  const std::vector<Tensor> b = RunOnDevice(
      R"(type: "ConstantFill" output: "Y" arg { name: "shape" ints: 2 } arg { name: "value" i: 1 }
         arg { name: "dtype" i: 5 })",
      {}, "cuda:0");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_TRUE(b[0].data<bool>()[0]);
  EXPECT_TRUE(b[0].data<bool>()[1]);
}

TEST(CudaFill, InputAsShapeIsRefusedOnCuda) {
  BRAID_REQUIRE_GPU();
  const Device cuda = ParseDevice("cuda:0");
  Workspace ws;
  Tensor shape(DType::kInt64, {2});
  shape.mutable_data<int64_t>()[0] = 2;
  shape.mutable_data<int64_t>()[1] = 3;
  Tensor* blob = ws.CreateBlob("S");
  *blob = Tensor(cuda);
  blob->CopyFrom(shape);
  const Status s = ws.RunNetOnce(NetOf({R"(type: "ConstantFill" input: "S" output: "Y"
      arg { name: "input_as_shape" i: 1 } device_option { device_type: )" +
                                        std::to_string(static_cast<int>(cuda.type)) +
                                        " device_id: 0 }"}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("input_as_shape = 1 is not supported on CUDA devices"),
            std::string::npos)
      << s.ToString();
}

TEST(CudaFill, GaussianFillHasTheMeanAndStdDevOfItsArguments) {
  BRAID_REQUIRE_GPU();
  const std::vector<float> v = CudaSamples(R"(type: "GaussianFill" output: "Y"
      arg { name: "shape" ints: 1000 ints: 101 } arg { name: "mean" f: 2 }
      arg { name: "std" f: 3 })");
  ASSERT_EQ(v.size(), 101000u);
  EXPECT_NEAR(Mean(v), 2.0, 0.05);
  EXPECT_NEAR(StdDev(v), 3.0, 0.05);
  // An odd count (cuRAND draws normals in pairs) and std = 0.
  EXPECT_EQ(CudaSamples(R"(type: "GaussianFill" output: "Y" arg { name: "shape" ints: 7 ints: 13 }
                           arg { name: "mean" f: 4 } arg { name: "std" f: 0 })"),
            std::vector<float>(91, 4.f));
  const std::vector<float> odd = CudaSamples(
      R"(type: "GaussianFill" output: "Y" arg { name: "shape" ints: 7 ints: 13 })");
  ASSERT_EQ(odd.size(), 91u);
  for (float x : odd) EXPECT_TRUE(std::isfinite(x));
}

TEST(CudaFill, UniformFillsStayInTheirRange) {
  BRAID_REQUIRE_GPU();
  const std::vector<float> v = CudaSamples(R"(type: "UniformFill" output: "Y"
      arg { name: "shape" ints: 100000 } arg { name: "min" f: -2 } arg { name: "max" f: 5 })");
  ExpectWithin(v, -2.f, 5.f);
  EXPECT_NEAR(Mean(v), 1.5, 0.05);
  EXPECT_NEAR(StdDev(v), 7 / std::sqrt(12.0), 0.05);

  ExpectCudaMatchesCpu(R"(type: "UniformIntFill" output: "Y" arg { name: "shape" ints: 20000 }
                          arg { name: "min" i: -3 } arg { name: "max" i: 4 })",
                       {}, Tolerance{}, {"Y"});
  const std::vector<Tensor> ints = RunOnDevice(
      R"(type: "UniformIntFill" output: "Y" arg { name: "shape" ints: 20000 }
         arg { name: "min" i: -3 } arg { name: "max" i: 4 })",
      {}, "cuda:0");
  ASSERT_EQ(ints.size(), 1u);
  const int32_t* data = ints[0].data<int32_t>();
  const std::set<int32_t> seen(data, data + ints[0].numel());
  EXPECT_EQ(seen, (std::set<int32_t>{-3, -2, -1, 0, 1, 2, 3, 4}));
  double sum = 0;
  for (int64_t i = 0; i < ints[0].numel(); ++i) sum += data[i];
  EXPECT_NEAR(sum / static_cast<double>(ints[0].numel()), 0.5, 0.08);
}

TEST(CudaFill, MSRAAndXavierFillsFollowTheFanIn) {
  BRAID_REQUIRE_GPU();
  const std::vector<float> msra = CudaSamples(R"(type: "MSRAFill" output: "Y"
      arg { name: "shape" ints: 64 ints: 32 ints: 3 ints: 3 })");  // fan_in 288
  EXPECT_NEAR(Mean(msra), 0.0, 0.005);
  EXPECT_NEAR(StdDev(msra), std::sqrt(2.0 / 288), 0.002);
  const std::vector<float> xavier = CudaSamples(R"(type: "XavierFill" output: "Y"
      arg { name: "shape" ints: 100 ints: 501 })");  // fan_in 501
  const float scale = std::sqrt(3.f / 501);
  ExpectWithin(xavier, -scale, scale);
  EXPECT_NEAR(Mean(xavier), 0.0, 0.002);
  EXPECT_NEAR(StdDev(xavier), scale / std::sqrt(3.0), 0.002);
}

TEST(CudaFill, ARandomFillGivesTheSameValuesOnEveryRun) {
  BRAID_REQUIRE_GPU();
  for (const char* type : {"GaussianFill", "UniformFill", "MSRAFill", "XavierFill"}) {
    SCOPED_TRACE(type);
    const std::string op = std::string("type: \"") + type +
                           R"(" output: "Y" arg { name: "shape" ints: 9 ints: 11 }
                              arg { name: "seed" i: 1234 })";
    const std::vector<Tensor> first = RunOnDevice(op, {}, "cuda:0");
    const std::vector<Tensor> second = RunOnDevice(op, {}, "cuda:0");
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(ValuesOf(first[0]), ValuesOf(second[0]));
  }
}

}  // namespace
}  // namespace braid::test
