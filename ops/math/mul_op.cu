// Mul and MulGradient on CUDA devices (ops/math/mul_op.h).
#include "ops/math/elementwise_op.cuh"
#include "ops/math/mul_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

struct MulCuda {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a * b;
  }
};

// dA = dC * B (broadcast as the forward op did); dB = dC * A summed down to B's shape, in double.
class MulGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    for (int i = 0; i < 3; ++i) CheckInputType(*this, i, {DType::kFloat32});
    const Tensor& a = Input(0);
    const Tensor& b = Input(1);
    const Tensor& dc = Input(2);
    if (dc.shape() != a.shape()) {
      ThrowInvalidArgument("dC " + DescribeInput(*this, 2) + " must have A " +
                           DescribeInput(*this, 0) + "'s type and shape");
    }
    const BroadcastSizes s = ElementwiseBroadcast(def(), ShapeOf(a), ShapeOf(b));
    float* da = Output(0, DType::kFloat32, a.shape())->mutable_data<float>();
    float* db = Output(1, DType::kFloat32, b.shape())->mutable_data<float>();
    const int64_t n = a.numel();
    BroadcastBinaryKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
        dc.data<float>(), b.data<float>(), da, n, s.inner_b, s.inner, MulCuda{});
    CheckCudaLaunch("BroadcastBinaryKernel");
    SumMiddle(LoadProduct{dc.data<float>(), a.data<float>()}, s.outer, s.inner_b, s.inner, db);
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Mul, kCuda, "", BinaryElementwiseCudaOp<MulCuda>);
BRAID_REGISTER_OPERATOR(MulGradient, kCuda, "", MulGradientCudaOp);

}  // namespace braid
