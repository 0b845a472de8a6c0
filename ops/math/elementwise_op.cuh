// BinaryElementwiseCudaOp: the CUDA kernel of Add and Mul (ops/math/elementwise_op.h), with the
// same types (float32, int32, int64), legacy broadcast (`broadcast`, `axis`) and in-place pairs.
//
//   struct AddCuda {
//     template <typename T>
//     __device__ T operator()(T a, T b) const { return a + b; }
//   };
//   BRAID_REGISTER_OPERATOR(Add, kCuda, "", BinaryElementwiseCudaOp<AddCuda>);
//
// Include from .cu files only. Thread safety: as OperatorBase.
#ifndef BRAID_OPS_MATH_ELEMENTWISE_OP_CUH_
#define BRAID_OPS_MATH_ELEMENTWISE_OP_CUH_

#include "ops/common/cuda_elementwise.cuh"
#include "ops/common/dtype_dispatch.h"
#include "ops/common/op_checks.h"
#include "ops/math/elementwise_op.h"
#include "runtime/core/shape_inference.h"

namespace braid {

template <typename Functor>
class BinaryElementwiseCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32, DType::kInt32, DType::kInt64});
    CheckInputType(*this, 1, {Input(0).dtype()});
    DispatchArithmetic(Input(0).dtype(), [this](auto zero) { RunTyped<decltype(zero)>(); });
  }

 private:
  template <typename T>
  void RunTyped() {
    const Tensor& a = Input(0);
    const Tensor& b = Input(1);
    const BroadcastSizes s = ElementwiseBroadcast(def(), ShapeOf(a), ShapeOf(b));
    const int64_t n = a.numel();
    T* c = Output(0, a.dtype(), a.shape())->template mutable_data<T>();
    // One thread reads a[i] and b[j] before writing c[i], and C is B only when j = i: in place
    // is safe.
    BroadcastBinaryKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
        a.template data<T>(), b.template data<T>(), c, n, s.inner_b, s.inner, Functor{});
    CheckCudaLaunch("BroadcastBinaryKernel");
  }
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_ELEMENTWISE_OP_CUH_
