// AveragedLoss and AveragedLossGradient on CUDA devices (ops/loss/averaged_loss_op.h).
//
// The sum runs in double in a fixed order (ops/common/cuda_reduce.cuh), as the CPU sums in double:
// repeated runs give identical bits. dY is read on the device by the gradient kernel.
#include "ops/common/cuda_kernel.h"
#include "ops/common/cuda_reduce.cuh"
#include "ops/common/op_checks.h"
#include "ops/loss/averaged_loss_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

struct ElementTerm {
  const float* x;
  __device__ double operator()(int64_t i) const { return x[i]; }
};

struct StoreMean {
  int64_t n;
  float* mean;
  __device__ void operator()(double sum) const {
    *mean = n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.f;
  }
};

__global__ void AveragedLossGradientKernel(const float* dy, int64_t n, float* dx) {
  const float value = n > 0 ? *dy / static_cast<float>(n) : 0.f;
  BRAID_CUDA_KERNEL_LOOP(i, n) dx[i] = value;
}

class AveragedLossCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    const int64_t n = Input(0).numel();
    float* mean = Output(0, DType::kFloat32, {})->mutable_data<float>();
    QueueDeterministicSum<double>(n, ElementTerm{Input(0).data<float>()}, StoreMean{n, mean},
                                  "AveragedLoss sum");
  }
};

class AveragedLossGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {DType::kFloat32});
    InferAveragedLossGradientShape(def(), InputShapeInfos(*this));
    const int64_t n = Input(0).numel();
    float* dx = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
    AveragedLossGradientKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
        Input(1).data<float>(), n, dx);
    CheckCudaLaunch("AveragedLossGradientKernel");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(AveragedLoss, kCuda, "", AveragedLossCudaOp);
BRAID_REGISTER_OPERATOR(AveragedLossGradient, kCuda, "", AveragedLossGradientCudaOp);

}  // namespace braid
