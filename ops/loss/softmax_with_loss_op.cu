// SoftmaxWithLoss and SoftmaxWithLossGradient on CUDA devices (ops/loss/softmax_with_loss_op.h).
//
// Out-of-range labels: the labels are in device memory, so the host cannot check them as the CPU
// kernel does (it throws). Here a label outside [0, D) gives its row a NaN loss, so the loss output
// is NaN, and a NaN row of dX: the error shows in the loss instead of reading out of bounds.
//
// The softmax, the row losses, the weighted loss and the total weight are summed in double in a
// fixed order (ops/common/cuda_reduce.cuh), as the CPU kernel sums in double: repeated runs give
// identical bits, and the values agree with the CPU's to float rounding (expf and logf may differ
// from the host's by an ulp or two).
#include <algorithm>
#include <limits>

#include "ops/common/cuda_kernel.h"
#include "ops/common/cuda_reduce.cuh"
#include "ops/common/op_checks.h"
#include "ops/loss/class_scores.h"
#include "ops/loss/softmax_with_loss_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();

// Blocks for kernels that give each row a block (and loop when there are more rows).
unsigned int RowBlocks(int64_t rows) {
  return static_cast<unsigned int>(std::clamp<int64_t>(rows, 1, 4096));
}

__device__ float ClampedLog(float p) {
  return logf(p < kMinLogProbability ? kMinLogProbability : p);  // std::max(p, min) on the CPU
}

// The softmax of one row into pr, as SoftmaxRows (ops/activation/softmax_op.cc): exponentials of
// x - max, their sum in double, then one multiplication by the float inverse of the sum.
__device__ void SoftmaxRow(const float* xr, int64_t d, float* pr) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t j = threadIdx.x; j < d; j += kCudaThreads) max = max < xr[j] ? xr[j] : max;
  max = BlockMax(max);
  double sum = 0;
  for (int64_t j = threadIdx.x; j < d; j += kCudaThreads) {
    const float e = expf(xr[j] - max);
    pr[j] = e;
    sum += e;
  }
  const float inverse = static_cast<float>(1.0 / BlockSum(sum));
  for (int64_t j = threadIdx.x; j < d; j += kCudaThreads) pr[j] *= inverse;
}

// One block per row: P's row and the row's loss l_i (NaN for a label outside [0, d)). Exactly one
// of labels and label_probs is set.
__global__ void SoftmaxLossRowsKernel(const float* x, int64_t n, int64_t d, const int32_t* labels,
                                      const float* label_probs, float* p, double* row_loss) {
  for (int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    float* pr = p + row * d;
    SoftmaxRow(x + row * d, d, pr);
    double loss = 0;
    if (label_probs != nullptr) {
      // Each thread reads back the probabilities it wrote itself.
      for (int64_t j = threadIdx.x; j < d; j += kCudaThreads) {
        loss -= label_probs[row * d + j] * ClampedLog(pr[j]);
      }
      loss = BlockSum(loss);
    } else {
      __syncthreads();  // P[row, label] may have been written by another thread
      const int32_t label = labels[row];
      loss = label >= 0 && label < d ? -ClampedLog(pr[label]) : kNaN;
    }
    if (threadIdx.x == 0) row_loss[row] = loss;
  }
}

// The weighted loss and the total weight, summed in one pass.
struct LossSums {
  double loss;
  double weight;
};

__device__ LossSums operator+(const LossSums& a, const LossSums& b) {
  return {a.loss + b.loss, a.weight + b.weight};
}

struct WeightedRowLoss {
  const double* row_loss;
  const float* weights;  // null: every weight is 1
  __device__ LossSums operator()(int64_t i) const {
    const float w = weights != nullptr ? weights[i] : 1.f;
    return {w * row_loss[i], w};
  }
};

struct StoreLoss {
  float scale;
  float* loss;
  __device__ void operator()(const LossSums& s) const {
    *loss = s.weight != 0 ? static_cast<float>(s.loss * scale / s.weight) : 0.f;
  }
};

struct RowWeight {
  const float* weights;  // null: every weight is 1
  __device__ double operator()(int64_t i) const { return weights != nullptr ? weights[i] : 1.f; }
};

// g = scale * dloss / sum(w), the factor every row's gradient shares (0 when sum(w) = 0).
struct StoreGradientScale {
  float scale;
  const float* dloss;
  float* g;
  __device__ void operator()(double total) const {
    *g = total != 0 ? static_cast<float>(scale * static_cast<double>(*dloss) / total) : 0.f;
  }
};

// dX = (P - target) * w_i * g over the n * d elements; a row with a bad label gets NaN.
__global__ void SoftmaxLossGradientKernel(const float* p, const int32_t* labels,
                                          const float* label_probs, const float* weights,
                                          const float* g, int64_t n, int64_t d, float* dx) {
  const float scale = *g;
  const int64_t count = n * d;
  BRAID_CUDA_KERNEL_LOOP(k, count) {
    const int64_t i = k / d;
    const int64_t j = k - i * d;
    const float row_g = (weights != nullptr ? weights[i] : 1.f) * scale;
    float target;
    if (label_probs != nullptr) {
      target = label_probs[k];
    } else {
      const int32_t label = labels[i];
      target = label >= 0 && label < d ? static_cast<float>(j == label) : kNaNf;
    }
    dx[k] = (p[k] - target) * row_g;
  }
}

class SoftmaxWithLossCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    const bool label_prob = args().Get<bool>("label_prob", false);
    const bool weighted = InputSize() == 3;
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {label_prob ? DType::kFloat32 : DType::kInt32});
    if (weighted) CheckInputType(*this, 2, {DType::kFloat32});
    const ClassScores s = CheckSoftmaxWithLossInputs(def(), InputShapeInfos(*this), weighted);
    float* p = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
    float* loss = Output(1, DType::kFloat32, {})->mutable_data<float>();
    const int32_t* labels = label_prob ? nullptr : Input(1).data<int32_t>();
    const float* label_probs = label_prob ? Input(1).data<float>() : nullptr;
    const float* weights = weighted ? Input(2).data<float>() : nullptr;
    DeviceScratch row_loss_scratch(static_cast<size_t>(s.n) * sizeof(double));
    double* row_loss = static_cast<double*>(row_loss_scratch.get());
    if (s.n > 0) {
      SoftmaxLossRowsKernel<<<RowBlocks(s.n), kCudaThreads, 0, CurrentCudaStream()>>>(
          Input(0).data<float>(), s.n, s.d, labels, label_probs, p, row_loss);
      CheckCudaLaunch("SoftmaxLossRowsKernel");
    }
    QueueDeterministicSum<LossSums>(s.n, WeightedRowLoss{row_loss, weights},
                                    StoreLoss{args().Get<float>("scale", 1.f), loss},
                                    "SoftmaxWithLoss sum");
  }
};

class SoftmaxWithLossGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    const bool label_prob = args().Get<bool>("label_prob", false);
    for (int i = 0; i < InputSize(); ++i) {
      CheckInputType(*this, i, {i == 1 && !label_prob ? DType::kInt32 : DType::kFloat32});
    }
    const ClassScores s = CheckSoftmaxWithLossGradientInputs(def(), InputShapeInfos(*this));
    const int p_index = InputSize() - 2;
    const float* weights = p_index == 3 ? Input(2).data<float>() : nullptr;
    DeviceScratch g_scratch(sizeof(float));
    float* g = static_cast<float*>(g_scratch.get());
    QueueDeterministicSum<double>(
        s.n, RowWeight{weights},
        StoreGradientScale{args().Get<float>("scale", 1.f), Input(p_index + 1).data<float>(), g},
        "SoftmaxWithLossGradient weights");
    const int32_t* labels = label_prob ? nullptr : Input(1).data<int32_t>();
    const float* label_probs = label_prob ? Input(1).data<float>() : nullptr;
    float* dx = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
    SoftmaxLossGradientKernel<<<CudaBlocks(s.n * s.d), kCudaThreads, 0, CurrentCudaStream()>>>(
        Input(p_index).data<float>(), labels, label_probs, weights, g, s.n, s.d, dx);
    CheckCudaLaunch("SoftmaxLossGradientKernel");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(SoftmaxWithLoss, kCuda, "", SoftmaxWithLossCudaOp);
BRAID_REGISTER_OPERATOR(SoftmaxWithLossGradient, kCuda, "", SoftmaxWithLossGradientCudaOp);

}  // namespace braid
