// ops/common/cuda_kernel.h on a GPU: a thread's cuBLAS handle alternating between streams, each
// with its own workspace, and the library handles made holding the device's lock
// (runtime/device/device_lock.h). They skip without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>

#include "ops/cuda_test_util.h"
#include "runtime/core/device_context.h"
#include "runtime/device/device_lock.h"

#if BRAID_WITH_CUDA  // the toolkit's headers
#include "ops/common/cublas_library.h"
#include "ops/common/cuda_kernel.h"

namespace braid::test {
namespace {

// One thread's cuBLAS handle moves between two streams, each stream with a workspace of its own
// (ops/common/cuda_kernel.h CublasHandle): products queued alternately on both, large enough for
// cuBLAS to use its workspace, all come out right.
TEST(CudaKernel, OneCublasHandleAlternatingBetweenStreamsComputesEveryProduct) {
  BRAID_REQUIRE_GPU();
  constexpr int n = 512;
  const Device cuda = ParseDevice("cuda:0");
  const HostBlob a = RandomFloats("A", {n, n}, 3), b = RandomFloats("B", {n, n}, 4);
  Tensor zeros(DType::kFloat32, {n, n});
  std::fill_n(zeros.mutable_data<float>(), n * n, 0.f);
  Tensor da(cuda), db(cuda), c_ab(cuda), c_ba(cuda);
  da.CopyFrom(a.value);
  db.CopyFrom(b.value);
  c_ab.CopyFrom(zeros);
  c_ba.CopyFrom(zeros);
  Stream* first = GetDeviceContext(cuda)->stream(1);
  Stream* second = GetDeviceContext(cuda)->stream(2);
  cublasHandle_t on_first = nullptr, on_second = nullptr;
  const float one = 1.f, zero = 0.f;
  // Column-major: C^T = B^T A^T is the row-major C = A B.
  const auto product = [&](const Tensor& x, const Tensor& y, Tensor* out, cublasHandle_t* used) {
    *used = CublasHandle();
    CheckCublas(Cublas().sgemm(*used, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, y.data<float>(), n,
                               x.data<float>(), n, &zero, out->mutable_data<float>(), n),
                "cublasSgemm");
  };
  for (int round = 0; round < 4; ++round) {
    first->RunHere([&] { product(da, db, &c_ab, &on_first); });
    second->RunHere([&] { product(db, da, &c_ba, &on_second); });
  }
  first->Synchronize();
  second->Synchronize();
  EXPECT_EQ(on_first, on_second) << "one handle per thread and device";
  for (const auto& [out, x, y] : {std::tuple{&c_ab, &a, &b}, std::tuple{&c_ba, &b, &a}}) {
    Tensor host;
    host.CopyFrom(*out);
    const float* p = host.data<float>();
    const float* xs = x->value.data<float>();
    const float* ys = y->value.data<float>();
    int64_t bad = 0;
    for (int i = 0; i < n; i += 37) {
      for (int j = 0; j < n; ++j) {
        double want = 0, magnitude = 0;
        for (int k = 0; k < n; ++k) {
          want += static_cast<double>(xs[i * n + k]) * ys[k * n + j];
          magnitude += std::abs(static_cast<double>(xs[i * n + k]) * ys[k * n + j]);
        }
        // float sums of 512 products: within 1e-5 of their magnitudes (a few hundred ulps)
        bad += std::abs(p[i * n + j] - want) > 1e-5 * magnitude;
      }
    }
    EXPECT_EQ(bad, 0);
  }
}

// Made by a fresh thread (no handles yet) on cuda:0's stream 0 while this thread holds the
// device's lock: `make` must wait for the lock, then finish.
void ExpectMadeHoldingTheDeviceLock(const std::string& what, const std::function<void()>& make) {
  const Device cuda = ParseDevice("cuda:0");
  std::atomic<bool> made{false};
  std::unique_lock<std::mutex> held = LockDevice(cuda);
  std::thread maker([&] {
    GetDeviceContext(cuda)->stream(0)->RunHere(make);
    made = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(made) << what << " was made while another thread held the device's lock";
  held.unlock();
  maker.join();
  EXPECT_TRUE(made) << what;
}

TEST(CudaKernel, LibraryHandlesAreMadeHoldingTheDeviceLock) {
  BRAID_REQUIRE_GPU();
  Stream* stream = GetDeviceContext(ParseDevice("cuda:0"))->stream(0);
  stream->RunHere([] { CublasHandle(); });  // the stream's cuBLAS workspace, allocated beforehand
  ExpectMadeHoldingTheDeviceLock("a cuBLAS handle", [] { CublasHandle(); });
  ExpectMadeHoldingTheDeviceLock("a cuDNN handle", [] { CudnnHandle(); });
  ExpectMadeHoldingTheDeviceLock("a cuRAND generator", [] {
    DestroyCurandGenerator(CreateCurandGenerator(1), CurrentCudaDevice());
  });
}

TEST(CudaKernel, CublasWorkspacesFollowNvidiasRecommendation) {
  EXPECT_EQ(CublasWorkspaceBytes(8), size_t{4} << 20);   // Ampere
  EXPECT_EQ(CublasWorkspaceBytes(9), size_t{32} << 20);  // Hopper
  EXPECT_EQ(CublasWorkspaceBytes(10), size_t{32} << 20);
}

TEST(CudaKernel, Tf32IsOnOnlyWhereTheEnvironmentSaysSo) {
  for (const char* on : {"1", "on", "true"}) EXPECT_TRUE(ParseCudaTf32(on)) << on;
  for (const char* off : {"0", "off", "false", "", "yes please"}) {
    EXPECT_FALSE(ParseCudaTf32(off)) << off;
  }
  EXPECT_FALSE(ParseCudaTf32(nullptr));  // unset: float32 products stay float32
}

}  // namespace
}  // namespace braid::test

#endif  // BRAID_WITH_CUDA
