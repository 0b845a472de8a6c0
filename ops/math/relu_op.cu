// Relu and ReluGradient on CUDA devices (ops/math/relu_op.h).
#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

// x unless x < 0, exactly as the CPU's std::max(x, 0.f): a NaN passes through (so a diverging
// net shows NaN on both devices) and -0 stays -0. `x > 0 ? x : 0` would turn NaN into 0.
__global__ void ReluKernel(const float* x, float* y, int64_t n) {
  BRAID_CUDA_KERNEL_LOOP(i, n) {
    const float v = x[i];
    y[i] = v < 0.f ? 0.f : v;
  }
}

__global__ void ReluGradientKernel(const float* y, const float* dy, float* dx, int64_t n) {
  BRAID_CUDA_KERNEL_LOOP(i, n) dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}

class ReluCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    const Tensor& x = Input(0);
    const int64_t n = x.numel();
    const float* xs = x.data<float>();
    float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    ReluKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(xs, y, n);
    CheckCudaLaunch("ReluKernel");
  }
};

class ReluGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {DType::kFloat32});
    CheckSameTypeAndShape(def(), InputShapeInfos(*this), 1);
    const Tensor& dy = Input(1);
    const int64_t n = dy.numel();
    const float* ys = Input(0).data<float>();
    const float* dys = dy.data<float>();
    float* dx = Output(0, DType::kFloat32, dy.shape())->mutable_data<float>();
    ReluGradientKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(ys, dys, dx, n);
    CheckCudaLaunch("ReluGradientKernel");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Relu, kCuda, "", ReluCudaOp);
BRAID_REGISTER_OPERATOR(ReluGradient, kCuda, "", ReluGradientCudaOp);

}  // namespace braid
