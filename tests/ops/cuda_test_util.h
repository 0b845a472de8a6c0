// CUDA kernels against their CPU kernels: one op with the same arguments and inputs runs as a
// one-op net on cpu:0 and on cuda:0 (through the launcher, as in a real net), and every output
// must agree within a stated tolerance.
//
//   TEST(CudaMath, ReluMatchesCpu) {
//     BRAID_REQUIRE_GPU();   // skips, with CUDA's error as the reason, where there is no GPU
//     ExpectCudaMatchesCpu(R"(type: "Relu" input: "X" output: "Y")",
//                          {RandomFloats("X", {4, 5}, /*seed=*/1)}, Tolerance{0, 0});
//   }
//
// Tests in this style compile everywhere and are counted as skipped, never passed, on machines
// without a GPU.
#ifndef BRAID_TESTS_OPS_CUDA_TEST_UTIL_H_
#define BRAID_TESTS_OPS_CUDA_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace braid::test {

// Why cuda:0 cannot be used ("" when it can): CUDA's error, or that the build has no CUDA backend.
std::string NoGpuReason();

#define BRAID_REQUIRE_GPU()                                                     \
  if (const std::string why = ::braid::test::NoGpuReason(); !why.empty()) {     \
    GTEST_SKIP() << "no GPU: " << why;                                          \
  }

struct HostBlob {
  std::string name;
  Tensor value;  // on the host
};

// Uniform in [lo, hi) from a fixed seed (printed by the comparison on failure).
HostBlob RandomFloats(const std::string& name, std::vector<int64_t> dims, uint64_t seed,
                      float lo = -1.f, float hi = 1.f);
HostBlob Int32s(const std::string& name, std::vector<int64_t> dims, std::vector<int32_t> values);
HostBlob Floats(const std::string& name, std::vector<int64_t> dims, std::vector<float> values);

// |cuda - cpu| <= abs + rel * |cpu| for every element.
struct Tolerance {
  double abs = 1e-5;
  double rel = 1e-5;
};

// Runs `op_text` (an OperatorDef in text format, without device_option) on cpu:0 and on cuda:0
// with `inputs`, and expects every output to have the same type and shape and values within
// `tol`. Outputs named in `ignore` are only checked for type and shape (e.g. random fills).
void ExpectCudaMatchesCpu(const std::string& op_text, const std::vector<HostBlob>& inputs,
                          Tolerance tol, const std::vector<std::string>& ignore = {});

// Runs `op_text` on `device` ("cpu:0", "cuda:0") with `inputs` and returns its outputs copied to
// the host, in output order; fails the test (and returns {}) when the run fails.
std::vector<Tensor> RunOnDevice(const std::string& op_text, const std::vector<HostBlob>& inputs,
                                const std::string& device);

}  // namespace braid::test

#endif  // BRAID_TESTS_OPS_CUDA_TEST_UTIL_H_
