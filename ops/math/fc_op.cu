// FC and FCGradient on CUDA devices (ops/math/fc_op.h), with cuBLAS.
//
// cuBLAS is column-major: a row-major [R, C] matrix is its column-major [C, R] transpose, so every
// row-major product P = A B is computed as P^T = B^T A^T with the operands swapped. The handle is
// set to CUBLAS_DEFAULT_MATH before each call: float32 products use no TF32, so results stay
// within float rounding of the CPU's (CUBLAS_TF32_TENSOR_OP_MATH with CudaTf32Allowed(),
// ops/common/cuda_kernel.h). db is a deterministic column sum (no atomics).
#include <limits>
#include <string>

#include "ops/common/cublas_library.h"
#include "ops/common/cuda_elementwise.cuh"
#include "ops/common/op_checks.h"
#include "ops/math/fc_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

// y[r, c] = bias[c] for a row-major [rows, n] y.
__global__ void BroadcastRowsKernel(const float* bias, float* y, int64_t total, int64_t n) {
  BRAID_CUDA_KERNEL_LOOP(i, total) y[i] = bias[i % n];
}

void CheckCublasSize(const OperatorDef& def, const FcSizes& s) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (s.m > kMax || s.n > kMax || s.k > kMax) {
    ThrowInvalidArgument("FC '" + def.output(0) +
                         "' is too large for cuBLAS: M=" + std::to_string(s.m) +
                         " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
  }
}

// The thread's handle, set for float32 products (TF32 only where allowed) and alpha, beta on the
// host (other ops share the handle and may have changed either).
cublasHandle_t Fp32CublasHandle() {
  cublasHandle_t handle = CublasHandle();
  CheckCublas(Cublas().set_math_mode(handle, CudaTf32Allowed() ? CUBLAS_TF32_TENSOR_OP_MATH
                                                               : CUBLAS_DEFAULT_MATH),
              "cublasSetMathMode");
  CheckCublas(Cublas().set_pointer_mode(handle, CUBLAS_POINTER_MODE_HOST),
              "cublasSetPointerMode");
  return handle;
}

void FillZeros(float* p, int64_t count) {
  if (count > 0) {
    CheckCuda(
        cudaMemsetAsync(p, 0, static_cast<size_t>(count) * sizeof(float), CurrentCudaStream()),
        "cudaMemsetAsync", CurrentDevice());
  }
}

class FCCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    for (int i = 0; i < 3; ++i) CheckInputType(*this, i, {DType::kFloat32});
    const FcSizes s = ComputeFcSizes(def(), InputShapeInfos(*this));
    CheckCublasSize(def(), s);
    float* y = Output(0, DType::kFloat32, s.y_dims)->mutable_data<float>();
    const int64_t total = s.m * s.n;
    if (total == 0) return;
    BroadcastRowsKernel<<<CudaBlocks(total), kCudaThreads, 0, CurrentCudaStream()>>>(
        Input(2).data<float>(), y, total, s.n);
    CheckCudaLaunch("BroadcastRowsKernel");
    if (s.k == 0) return;
    const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
    const float one = 1.f;
    // Y^T [N, M] = W [N, K] X^T [K, M] (+ Y^T, the bias): W is stored as W^T, X as X^T.
    CheckCublas(Cublas().sgemm(Fp32CublasHandle(), CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one,
                            Input(1).data<float>(), k, Input(0).data<float>(), k, &one, y, n),
                "cublasSgemm");
  }
};

class FCGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    for (int i = 0; i < 3; ++i) CheckInputType(*this, i, {DType::kFloat32});
    const FcSizes s = ComputeFcGradientSizes(def(), InputShapeInfos(*this));
    CheckCublasSize(def(), s);
    float* dw = Output(0, DType::kFloat32, Input(1).shape())->mutable_data<float>();
    float* db = Output(1, DType::kFloat32, {s.n})->mutable_data<float>();
    float* dx = OutputSize() > 2
                    ? Output(2, DType::kFloat32, Input(0).shape())->mutable_data<float>()
                    : nullptr;
    const float* x = Input(0).data<float>();
    const float* w = Input(1).data<float>();
    const float* dy = Input(2).data<float>();
    SumMiddle(LoadValue{dy}, s.m, s.n, 1, db);  // db[j] = sum over rows of dY[i, j]
    if (s.m == 0 || s.n == 0 || s.k == 0) {     // cuBLAS may skip beta = 0 for an empty product
      FillZeros(dw, s.n * s.k);
      if (dx != nullptr) FillZeros(dx, s.m * s.k);
      return;
    }
    const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
    const float one = 1.f, zero = 0.f;
    cublasHandle_t handle = Fp32CublasHandle();
    // dW^T [K, N] = X^T [K, M] dY [M, N]: X is stored as X^T, dY as dY^T.
    CheckCublas(
        Cublas().sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, k, n, m, &one, x, k, dy, n, &zero, dw, k),
        "cublasSgemm");
    if (dx == nullptr) return;
    // dX^T [K, M] = W^T [K, N] dY^T [N, M]: both stored transposed already.
    CheckCublas(
        Cublas().sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, k, m, n, &one, w, k, dy, n, &zero, dx, k),
        "cublasSgemm");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(FC, kCuda, "", FCCudaOp);
BRAID_REGISTER_OPERATOR(FCGradient, kCuda, "", FCGradientCudaOp);

}  // namespace braid
