// WeightedSum and WeightedSumGradient on CUDA devices (ops/train/weighted_sum_op.h).
//
// The weights are one-element tensors on the op's device (the schema's default place), e.g. a
// learning rate computed on the GPU, so kernels read them through device pointers.
// WeightedSum adds up to kPairsPerLaunch pairs per launch in the CPU's order (w0 X0 + w1 X1 + ...);
// nvcc may fuse each multiply-add into an FMA where the CPU rounds twice (about an ulp apart).
// The gradient's dw_i are dot products summed in double in a fixed order
// (ops/common/cuda_reduce.cuh), so repeated runs give identical bits.
#include <algorithm>

#include "ops/common/cuda_kernel.h"
#include "ops/common/cuda_reduce.cuh"
#include "ops/common/op_checks.h"
#include "ops/train/weighted_sum_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

constexpr int kPairsPerLaunch = 8;

// Up to kPairsPerLaunch pairs (X_k, w_k), passed by value as kernel arguments.
struct WeightedInputs {
  const float* x[kPairsPerLaunch];
  const float* w[kPairsPerLaunch];
  int count;
};

// y = (accumulate ? y : 0) + sum_k w_k X_k, in the order of k. Y may be X_0 of the first launch:
// each thread reads an element before it writes it.
__global__ void WeightedSumKernel(WeightedInputs in, bool accumulate, int64_t n, float* y) {
  BRAID_CUDA_KERNEL_LOOP(j, n) {
    float sum = accumulate ? y[j] : *in.w[0] * in.x[0][j];
    for (int k = accumulate ? 0 : 1; k < in.count; ++k) sum += *in.w[k] * in.x[k][j];
    y[j] = sum;
  }
}

__global__ void ScaleKernel(const float* w, const float* dy, int64_t n, float* dx) {
  const float weight = *w;
  BRAID_CUDA_KERNEL_LOOP(j, n) dx[j] = weight * dy[j];
}

struct DotTerm {
  const float* dy;
  const float* x;
  __device__ double operator()(int64_t j) const { return static_cast<double>(dy[j]) * x[j]; }
};

struct StoreFloat {
  float* out;
  __device__ void operator()(double sum) const { *out = static_cast<float>(sum); }
};

class WeightedSumCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
    InferWeightedSumShape(def(), InputShapeInfos(*this));
    const int64_t n = Input(0).numel();
    float* y = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
    const int pairs = InputSize() / 2;
    for (int first = 0; first < pairs; first += kPairsPerLaunch) {
      WeightedInputs in{};
      in.count = std::min(kPairsPerLaunch, pairs - first);
      for (int k = 0; k < in.count; ++k) {
        in.x[k] = Input(2 * (first + k)).data<float>();
        in.w[k] = Input(2 * (first + k) + 1).data<float>();
      }
      WeightedSumKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(in, first > 0, n,
                                                                                 y);
      CheckCudaLaunch("WeightedSumKernel");
    }
  }
};

class WeightedSumGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
    const std::vector<ShapeInfo> out = InferWeightedSumGradientShape(def(), InputShapeInfos(*this));
    const int pairs = (InputSize() - 1) / 2;
    const int64_t n = Input(0).numel();
    const float* dy = Input(0).data<float>();
    for (int k = 0; k < pairs; ++k) {
      float* dx = Output(k, DType::kFloat32, out[k].dims)->mutable_data<float>();
      ScaleKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
          Input(2 + 2 * k).data<float>(), dy, n, dx);
      CheckCudaLaunch("ScaleKernel");
    }
    for (int k = pairs; k < OutputSize(); ++k) {
      float* dw = Output(k, DType::kFloat32, out[k].dims)->mutable_data<float>();
      QueueDeterministicSum<double>(n, DotTerm{dy, Input(1 + 2 * (k - pairs)).data<float>()},
                                    StoreFloat{dw}, "WeightedSumGradient dot");
    }
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(WeightedSum, kCuda, "", WeightedSumCudaOp);
BRAID_REGISTER_OPERATOR(WeightedSumGradient, kCuda, "", WeightedSumGradientCudaOp);

}  // namespace braid
