// Softmax and SoftmaxGradient on CUDA devices (ops/activation/softmax_op.h): one block per row
// (blocks loop over rows), reductions in a fixed order, sums in double as on the CPU.
#include <algorithm>

#include "ops/activation/softmax_op.h"
#include "ops/activation/unary_elementwise_op.h"
#include "ops/common/cuda_elementwise.cuh"
#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

struct DeviceMax {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Every thread reads its elements of a row before the first barrier of the reduction and later
// writes only those same elements, so y may be x.
__global__ void SoftmaxKernel(const float* x, float* y, int64_t rows, int64_t cols) {
  __shared__ float max_partial[kCudaThreads];
  __shared__ double sum_partial[kCudaThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float max = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) max = fmaxf(max, xr[c]);
    max = BlockReduce(max, max_partial, DeviceMax{});
    double sum = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float e = expf(xr[c] - max);
      yr[c] = e;
      sum += e;
    }
    sum = BlockReduce(sum, sum_partial, DeviceSum{});
    const float inverse = static_cast<float>(1.0 / sum);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] *= inverse;
  }
}

// dX = Y * (dY - dot(dY, Y)) per row; dx may be dy (as above).
__global__ void SoftmaxGradientKernel(const float* y, const float* dy, float* dx, int64_t rows,
                                      int64_t cols) {
  __shared__ double dot_partial[kCudaThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = r * cols;
    double dot = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      dot += static_cast<double>(dy[base + c]) * y[base + c];
    }
    const float dot_f = static_cast<float>(BlockReduce(dot, dot_partial, DeviceSum{}));
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      dx[base + c] = y[base + c] * (dy[base + c] - dot_f);
    }
  }
}

unsigned int RowBlocks(int64_t rows) {
  return static_cast<unsigned int>(std::clamp<int64_t>(rows, 1, 4096));
}

class SoftmaxCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    const Tensor& x = Input(0);
    const SoftmaxSizes s = ComputeSoftmaxSizes(def(), ShapeOf(x));
    float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    SoftmaxKernel<<<RowBlocks(s.rows), kCudaThreads, 0, CurrentCudaStream()>>>(x.data<float>(), y,
                                                                               s.rows, s.cols);
    CheckCudaLaunch("SoftmaxKernel");
  }
};

class SoftmaxGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {DType::kFloat32});
    InferOutputGradientShape(def(), InputShapeInfos(*this));
    const SoftmaxSizes s = ComputeSoftmaxSizes(def(), ShapeOf(Input(0)));
    float* dx = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
    SoftmaxGradientKernel<<<RowBlocks(s.rows), kCudaThreads, 0, CurrentCudaStream()>>>(
        Input(0).data<float>(), Input(1).data<float>(), dx, s.rows, s.cols);
    CheckCudaLaunch("SoftmaxGradientKernel");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Softmax, kCuda, "", SoftmaxCudaOp);
BRAID_REGISTER_OPERATOR(SoftmaxGradient, kCuda, "", SoftmaxGradientCudaOp);

}  // namespace braid
