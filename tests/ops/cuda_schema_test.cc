// What of the CUDA kernels runs without a GPU: which ops have one, and that a net of CUDA ops is
// checked against the ops' schemas before any CUDA device is touched, so bad arguments get the
// schema's error (naming the op) on every machine, not CUDA's.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/cuda_test_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/workspace.h"

namespace braid::test {
namespace {

constexpr char kOnCuda[] = " device_option { device_type: 1 device_id: 0 }";

// The message of the error building `op_text` on cuda:0 as a one-op net raises ("" if none).
std::string BuildError(const std::string& op_text) {
  Workspace ws;
  try {
    ws.CreateNet(NetOf({op_text + kOnCuda}));
  } catch (const Error& e) {
    return e.status().message();
  }
  return "";
}

#ifdef BRAID_WITH_CUDA
TEST(CudaKernels, TheResNetTrainingOpsHaveCudaKernels) {
  const std::vector<std::string> types = KernelTypes(DeviceType::kCuda);
  for (const char* type :
       {"Accuracy", "Allreduce", "AveragePool", "AveragePoolGradient", "ConstantFill", "Conv",
        "ConvGradient", "Copy", "CopyCPUToGPU", "CopyGPUToCPU", "FC", "FCGradient", "Iter",
        "LearningRate", "MSRAFill", "MomentumSGDUpdate", "Relu", "ReluGradient",
        "SoftmaxWithLoss", "SoftmaxWithLossGradient", "SpatialBN", "SpatialBNApply",
        "SpatialBNGradient", "Sum", "XavierFill"}) {
    EXPECT_TRUE(std::binary_search(types.begin(), types.end(), type)) << type;
  }
}
#endif

TEST(CudaKernels, EveryCudaKernelHasASchemaAndACpuKernelToCompareWith) {
  for (const std::string& type : KernelTypes(DeviceType::kCuda)) {
    EXPECT_NE(FindSchema(type), nullptr) << type;
    // The host<->device copies have none for cpu (they have sim's, the same copy).
    EXPECT_TRUE(HasKernel(type, DeviceType::kCpu) || HasKernel(type, DeviceType::kSim)) << type;
  }
}

TEST(CudaKernels, AWrongArityIsTheSchemasErrorWithoutTouchingTheGpu) {
  int checked = 0;
  for (const std::string& type : KernelTypes(DeviceType::kCuda)) {
    const std::string op = "type: \"" + type + "\" name: \"bad\"";
    if (FindSchema(type)->Verify(ParseOp(op + kOnCuda)).empty()) continue;  // takes no blobs
    const std::string error = BuildError(op);
    EXPECT_NE(error.find("net 'test' op #0 (" + type + " 'bad')"), std::string::npos) << type << ": " << error;
    EXPECT_EQ(error.find("CUDA"), std::string::npos) << error;
    ++checked;
  }
  EXPECT_EQ(checked == 0, KernelTypes(DeviceType::kCuda).empty());
}

TEST(CudaKernels, ABadArgumentIsTheSchemasErrorWithoutTouchingTheGpu) {
  const std::string error = BuildError(
      R"(type: "Relu" name: "r" input: "x" output: "y" output: "z")");
  EXPECT_NE(error.find("Relu 'r'"), std::string::npos) << error;
  EXPECT_NE(error.find("output"), std::string::npos) << error;
  EXPECT_EQ(error.find("CUDA"), std::string::npos) << error;
}

// cuda:63 is a GPU no machine here has: on a machine without GPUs the error carries CUDA's
// reason, on one with GPUs it counts them; either way it names the device and nothing crashes.
TEST(CudaKernels, RunningOnAMissingGpuNamesTheDeviceAndWhy) {
  Workspace ws;
  *ws.CreateBlob("x") = Tensor(DType::kFloat32, {4});
  const Status s = ws.RunNetOnce(NetOf({R"(type: "Relu" name: "r" input: "x" output: "y")"
                                        R"( device_option { device_type: 1 device_id: 63 })"}));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cuda:63"), std::string::npos) << s.ToString();
#ifdef BRAID_WITH_CUDA
  EXPECT_NE(s.message().find("cuda:63 does not exist: "), std::string::npos) << s.ToString();
  const std::string why = NoGpuReason();
  const std::string reason =
      why.empty() ? "CUDA device(s)" : why.substr(why.find(": ") + 2);  // CUDA's own words
  EXPECT_NE(s.message().find(reason), std::string::npos) << s.ToString();
#endif
}

}  // namespace
}  // namespace braid::test
