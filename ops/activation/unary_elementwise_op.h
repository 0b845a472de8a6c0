// Elementwise float32 activations and their output-based gradients (Sigmoid, Tanh).
//
// UnaryElementwiseOp<F> computes Y = F(X) elementwise; Y may be X (in-place {0, 0}).
// OutputGradientOp<G> computes dX = G(Y, dY) elementwise, for activations whose derivative is a
// function of their output (sigmoid: Y (1 - Y), tanh: 1 - Y^2); dX may be dY (in-place {1, 0}).
// OutputBasedGradient is the gradient maker they share (Softmax uses it too): one op of the given
// type reading the forward output and its gradient.
//
//   struct SigmoidFunctor { float operator()(float x) const { return 1 / (1 + std::exp(-x)); } };
//   using SigmoidOp = UnaryElementwiseOp<SigmoidFunctor>;
//   BRAID_REGISTER_GRADIENT(Sigmoid, [](const GradientRequest& r) {
//     return OutputBasedGradient(r, "SigmoidGradient");
//   });
#ifndef BRAID_OPS_ACTIVATION_UNARY_ELEMENTWISE_OP_H_
#define BRAID_OPS_ACTIVATION_UNARY_ELEMENTWISE_OP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

template <typename Functor>
class UnaryElementwiseOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    const Tensor& x = Input(0);
    float* y = Output(0, DType::kFloat32, x.shape())->template mutable_data<float>();
    const float* xs = x.data<float>();  // after mutable_data: Y may be X
    ParallelFor(x.numel(), [=](int64_t begin, int64_t end) {
      const Functor f;
      for (int64_t i = begin; i < end; ++i) y[i] = f(xs[i]);
    });
  }
};

// Shape inference of UnaryElementwiseOp: X is float32; Y has its shape.
std::vector<ShapeInfo> InferUnaryShape(const OperatorDef& def, const std::vector<ShapeInfo>& in);
// Shape inference of a gradient op reading (Y, dY): both float32 of one shape; dX is like Y.
std::vector<ShapeInfo> InferOutputGradientShape(const OperatorDef& def,
                                                const std::vector<ShapeInfo>& in);

template <typename GradientFunctor>
class OutputGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {DType::kFloat32});
    InferOutputGradientShape(def(), InputShapeInfos(*this));
    const int64_t n = Input(0).numel();
    float* dx = Output(0, DType::kFloat32, Input(0).shape())->template mutable_data<float>();
    const float* y = Input(0).template data<float>();  // after mutable_data: dX may be dY
    const float* dy = Input(1).template data<float>();
    ParallelFor(n, [=](int64_t begin, int64_t end) {
      const GradientFunctor g;
      for (int64_t i = begin; i < end; ++i) dx[i] = g(y[i], dy[i]);
    });
  }
};

// The gradient of Y = f(X) as one op `gradient_type` (Y, dY) -> dX.
GradientOps OutputBasedGradient(const GradientRequest& request, const std::string& gradient_type);

}  // namespace braid

#endif  // BRAID_OPS_ACTIVATION_UNARY_ELEMENTWISE_OP_H_
