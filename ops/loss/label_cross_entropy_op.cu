// LabelCrossEntropy and LabelCrossEntropyGradient on CUDA devices
// (ops/loss/label_cross_entropy_op.h).
//
// Out-of-range labels: the labels are in device memory, so the host cannot check them as the CPU
// kernel does (it throws). Here a label outside [0, D) makes that row's Y NaN, and that row of dX
// NaN, instead of reading out of bounds.
#include <limits>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/loss/class_scores.h"
#include "ops/loss/label_cross_entropy_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();

__device__ float ClampedProbability(float p) {
  return p < kMinLogProbability ? kMinLogProbability : p;  // std::max(p, min) on the CPU
}

__global__ void LabelCrossEntropyKernel(const float* x, const int32_t* labels, int64_t n,
                                        int64_t d, float* y) {
  BRAID_CUDA_KERNEL_LOOP(i, n) {
    const int32_t label = labels[i];
    y[i] = label >= 0 && label < d ? -logf(ClampedProbability(x[i * d + label])) : kNaNf;
  }
}

// dX over the n * d elements: -dY[i] / X[i, label] at the label, 0 elsewhere, NaN for a bad label.
__global__ void LabelCrossEntropyGradientKernel(const float* x, const int32_t* labels,
                                                const float* dy, int64_t n, int64_t d,
                                                float* dx) {
  const int64_t count = n * d;
  BRAID_CUDA_KERNEL_LOOP(k, count) {
    const int64_t i = k / d;
    const int64_t j = k - i * d;
    const int32_t label = labels[i];
    if (label < 0 || label >= d) {
      dx[k] = kNaNf;
    } else {
      dx[k] = j == label ? -dy[i] / ClampedProbability(x[k]) : 0.f;
    }
  }
}

class LabelCrossEntropyCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {DType::kInt32});
    const std::vector<ShapeInfo> in = InputShapeInfos(*this);
    const ClassScores s = CheckClassScores(def(), in[0], in[1]);
    float* y = Output(0, DType::kFloat32, {s.n})->mutable_data<float>();
    LabelCrossEntropyKernel<<<CudaBlocks(s.n), kCudaThreads, 0, CurrentCudaStream()>>>(
        Input(0).data<float>(), Input(1).data<int32_t>(), s.n, s.d, y);
    CheckCudaLaunch("LabelCrossEntropyKernel");
  }
};

class LabelCrossEntropyGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {DType::kInt32});
    CheckInputType(*this, 2, {DType::kFloat32});
    const ClassScores s = CheckLabelCrossEntropyGradientInputs(def(), InputShapeInfos(*this));
    float* dx = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
    LabelCrossEntropyGradientKernel<<<CudaBlocks(s.n * s.d), kCudaThreads, 0,
                                      CurrentCudaStream()>>>(
        Input(0).data<float>(), Input(1).data<int32_t>(), Input(2).data<float>(), s.n, s.d, dx);
    CheckCudaLaunch("LabelCrossEntropyGradientKernel");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(LabelCrossEntropy, kCuda, "", LabelCrossEntropyCudaOp);
BRAID_REGISTER_OPERATOR(LabelCrossEntropyGradient, kCuda, "", LabelCrossEntropyGradientCudaOp);

}  // namespace braid
