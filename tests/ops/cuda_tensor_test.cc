// CUDA kernels of ops/tensor, ops/misc and ops/device against their CPU kernels (or, for the
// copies between host and device and for random masks, against what they must compute).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/cuda_test_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/device_context.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"

namespace braid::test {
namespace {

constexpr char kOnCuda[] = " device_option { device_type: 1 device_id: 0 }";

HostBlob Int64s(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
  Tensor t(DType::kInt64, std::move(dims));
  std::copy(values.begin(), values.end(), t.mutable_data<int64_t>());
  return {name, t};
}

HostBlob Bools(const std::string& name, std::vector<int64_t> dims, uint64_t seed) {
  Tensor t(DType::kBool, std::move(dims));
  std::mt19937_64 rng(seed);
  bool* values = t.mutable_data<bool>();
  for (int64_t i = 0; i < t.numel(); ++i) values[i] = rng() % 3 != 0;
  return {name, t};
}

TEST(CudaTensor, HostToDeviceAndBackCopiesEveryByte) {
  BRAID_REQUIRE_GPU();
  Workspace ws;
  const std::vector<float> values{1.5f, -2.f, 3.25f, 4.f, -5.f, 6.f};
  Feed(&ws, "X", {2, 3}, values);
  const NetDef net =
      NetOf({std::string(R"(type: "CopyCPUToGPU" input: "X" output: "Xd")") + kOnCuda,
             std::string(R"(type: "Copy" input: "Xd" output: "Yd")") + kOnCuda,
             std::string(R"(type: "CopyGPUToCPU" input: "Yd" output: "Y")") + kOnCuda});
  const Status s = ws.RunNetOnce(net);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ws.GetBlob("Xd")->device(), ParseDevice("cuda:0"));
  EXPECT_TRUE(ws.GetBlob("Y")->device().is_host());
  EXPECT_EQ(Fetch<float>(ws, "Y"), values);
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 3}));
}

// The transfer between devices without peer access: CopyGPUToCPU on cuda:0 writes a host blob H,
// CopyCPUToGPU on cuda:1 (cuda:0 where there is no cuda:1) reads it. The executor gives the second
// copy only a wait on its stream, so it must read H in stream order, after the first copy's bytes
// have landed (runtime/device/cuda/pinned_host_pool.h), as the sim test
// DeviceExecutorTest.ADeviceCopyReadsAHostBlobAfterTheDeviceCopyThatWritesIt does on sim. 16 MiB,
// so the first copy is still in flight when the second is launched; each run feeds other values,
// so a read at launch would see the last run's.
TEST(CudaTensor, ADeviceCopyReadsAHostBlobAfterTheDeviceCopyThatWritesIt) {
  BRAID_REQUIRE_GPU();
  const bool two = StatusFromCall([] { GetDeviceContext(Device{DeviceType::kCuda, 1}); }).ok();
  const std::string second = two ? " device_option { device_type: 1 device_id: 1 }" : kOnCuda;
  const NetDef def =
      NetOf({std::string(R"(type: "CopyCPUToGPU" input: "X" output: "Xd")") + kOnCuda,
             std::string(R"(type: "CopyGPUToCPU" input: "Xd" output: "H")") + kOnCuda,
             std::string(R"(type: "CopyCPUToGPU" input: "H" output: "Yd")") + second,
             std::string(R"(type: "CopyGPUToCPU" input: "Yd" output: "Y")") + second});
  constexpr int64_t kNumel = int64_t{4} << 20;
  Workspace ws;
  Net* net = nullptr;
  for (int run = 0; run < 3; ++run) {
    const float value = 1.5f + static_cast<float>(run);
    Feed(&ws, "X", {kNumel}, std::vector<float>(kNumel, value));
    if (net == nullptr) net = ws.CreateNet(def);
    const Status s = net->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
    const std::vector<float> y = Fetch<float>(ws, "Y");
    ASSERT_EQ(static_cast<int64_t>(y.size()), kNumel);
    EXPECT_EQ(std::count(y.begin(), y.end(), value), kNumel)
        << "run " << run << " on " << (two ? "cuda:0 and cuda:1" : "cuda:0") << ": Y[0] is "
        << y[0] << ", not " << value;
  }
}

TEST(CudaTensor, ConcatMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::string op = R"(type: "Concat" input: "A" input: "B" input: "C" output: "Y"
                            output: "split_info")";
  const std::vector<HostBlob> inputs{RandomFloats("A", {2, 3, 4}, 1),
                                     RandomFloats("B", {2, 5, 4}, 2),
                                     RandomFloats("C", {2, 1, 4}, 3)};
  ExpectCudaMatchesCpu(op, inputs, Tolerance{0, 0});
  ExpectCudaMatchesCpu(
      op + R"( arg { name: "axis" i: 0 } arg { name: "add_axis" i: 1 })",
      {RandomFloats("A", {3, 4}, 4), RandomFloats("B", {3, 4}, 5), RandomFloats("C", {3, 4}, 6)},
      Tolerance{0, 0});
  ExpectCudaMatchesCpu(
      op + R"( arg { name: "axis" i: -1 })",
      {Int32s("A", {2, 1}, {1, 2}), Int32s("B", {2, 2}, {3, 4, 5, 6}), Int32s("C", {2, 0}, {})},
      Tolerance{0, 0});
}

TEST(CudaTensor, SplitMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "Split" input: "X" output: "A" output: "B"
                          arg { name: "split" ints: 3 ints: 5 })",
                       {RandomFloats("X", {2, 8, 3}, 7)}, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Split" input: "X" output: "A" output: "B" output: "C"
                          arg { name: "axis" i: 0 })",
                       {RandomFloats("X", {6, 4}, 8)}, Tolerance{0, 0});
  // Sizes from an input on the device (Concat's split_info in a gradient).
  ExpectCudaMatchesCpu(R"(type: "Split" input: "X" input: "sizes" output: "A" output: "B")",
                       {RandomFloats("X", {3, 7}, 9), Int32s("sizes", {2}, {2, 5})},
                       Tolerance{0, 0});
}

TEST(CudaTensor, ReshapeFlattenAndResizeLikeMatchCpu) {
  BRAID_REQUIRE_GPU();
  const std::vector<HostBlob> x{RandomFloats("X", {2, 3, 4}, 10)};
  ExpectCudaMatchesCpu(R"(type: "Reshape" input: "X" output: "Y" output: "old"
                          arg { name: "shape" ints: 4 ints: -1 ints: 2 })",
                       x, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Reshape" input: "X" output: "X" output: "old"
                          arg { name: "shape" ints: 0 ints: -1 })",
                       x, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Reshape" input: "X" input: "shape" output: "Y" output: "old")",
                       {x[0], Int64s("shape", {2}, {6, -1})}, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Flatten" input: "X" output: "Y" arg { name: "axis" i: 2 })", x,
                       Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "ResizeLike" input: "X" input: "S" output: "Y")",
                       {x[0], RandomFloats("S", {8, 3}, 11)}, Tolerance{0, 0});
}

TEST(CudaTensor, DropoutInTestModeMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::vector<HostBlob> x{RandomFloats("X", {5, 7}, 12)};
  ExpectCudaMatchesCpu(R"(type: "Dropout" input: "X" output: "Y" output: "mask"
                          arg { name: "is_test" i: 1 })",
                       x, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "Dropout" input: "X" output: "X" arg { name: "is_test" i: 1 })", x,
                       Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "DropoutGrad" input: "dY" output: "dX"
                          arg { name: "is_test" i: 1 })",
                       {RandomFloats("dY", {5, 7}, 13)}, Tolerance{0, 0});
}

TEST(CudaTensor, DropoutGradWithAMaskMatchesCpu) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "DropoutGrad" input: "dY" input: "mask" output: "dX"
                          arg { name: "ratio" f: 0.25 })",
                       {RandomFloats("dY", {6, 11}, 14), Bools("mask", {6, 11}, 15)},
                       Tolerance{0, 0});
}

TEST(CudaTensor, DropoutKeepsOneMinusRatioScaledAndRepeatsWithItsSeed) {
  BRAID_REQUIRE_GPU();
  constexpr int64_t kN = 200000;
  const std::string op = R"(type: "Dropout" input: "X" output: "Y" output: "mask"
                            arg { name: "ratio" f: 0.3 } arg { name: "seed" i: 7 })";
  const std::vector<HostBlob> x{RandomFloats("X", {kN}, 16, 1.f, 2.f)};
  const std::vector<Tensor> first = RunOnDevice(op, x, "cuda:0");
  const std::vector<Tensor> again = RunOnDevice(op, x, "cuda:0");
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(again.size(), 2u);
  const float* in = x[0].value.data<float>();
  const float* y = first[0].data<float>();
  const bool* mask = first[1].data<bool>();
  int64_t kept = 0;
  for (int64_t i = 0; i < kN; ++i) {
    kept += mask[i];
    EXPECT_FLOAT_EQ(y[i], mask[i] ? in[i] * (1.f / (1.f - 0.3f)) : 0.f) << "element " << i;
    ASSERT_EQ(mask[i], again[1].data<bool>()[i]) << "element " << i << " with one seed";
  }
  // Binomial(200000, 0.7): standard deviation about 205.
  EXPECT_NEAR(static_cast<double>(kept), 0.7 * kN, 2000);
}

TEST(CudaTensor, NoOpRuns) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "NoOp" input: "X")", {RandomFloats("X", {2}, 17)}, Tolerance{0, 0});
}

}  // namespace
}  // namespace braid::test
