// SumReduceLike on CUDA devices (ops/math/sum_reduce_like_op.h).
#include "ops/common/cuda_elementwise.cuh"
#include "ops/common/op_checks.h"
#include "ops/math/elementwise_op.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

class SumReduceLikeCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {DType::kFloat32});
    const Tensor& a = Input(0);
    const BroadcastSizes s = ElementwiseBroadcast(def(), ShapeOf(a), ShapeOf(Input(1)));
    float* c = Output(0, DType::kFloat32, Input(1).shape())->mutable_data<float>();
    SumMiddle(LoadValue{a.data<float>()}, s.outer, s.inner_b, s.inner, c);
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(SumReduceLike, kCuda, "", SumReduceLikeCudaOp);

}  // namespace braid
