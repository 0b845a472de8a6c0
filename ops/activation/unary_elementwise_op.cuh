// The CUDA kernels of the elementwise activations (ops/activation/unary_elementwise_op.h):
// UnaryElementwiseCudaOp<F> computes Y = F(X), OutputGradientCudaOp<G> dX = G(Y, dY), float32,
// with the CPU ops' checks and in-place pairs (each thread reads its element before writing it).
//
//   struct TanhCuda { __device__ float operator()(float x) const { return tanhf(x); } };
//   BRAID_REGISTER_OPERATOR(Tanh, kCuda, "", UnaryElementwiseCudaOp<TanhCuda>);
//
// Include from .cu files only. Thread safety: as OperatorBase.
#ifndef BRAID_OPS_ACTIVATION_UNARY_ELEMENTWISE_OP_CUH_
#define BRAID_OPS_ACTIVATION_UNARY_ELEMENTWISE_OP_CUH_

#include "ops/activation/unary_elementwise_op.h"
#include "ops/common/cuda_elementwise.cuh"

namespace braid {

template <typename Functor>
class UnaryElementwiseCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    const Tensor& x = Input(0);
    const int64_t n = x.numel();
    float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    UnaryMapKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(x.data<float>(), y, n,
                                                                            Functor{});
    CheckCudaLaunch("UnaryMapKernel");
  }
};

template <typename GradientFunctor>
class OutputGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {DType::kFloat32});
    InferOutputGradientShape(def(), InputShapeInfos(*this));
    const int64_t n = Input(0).numel();
    float* dx = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
    BroadcastBinaryKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
        Input(0).data<float>(), Input(1).data<float>(), dx, n, n, int64_t{1}, GradientFunctor{});
    CheckCudaLaunch("BroadcastBinaryKernel");
  }
};

}  // namespace braid

#endif  // BRAID_OPS_ACTIVATION_UNARY_ELEMENTWISE_OP_CUH_
