// Relu: Y = max(X, 0) elementwise, float32 (Caffe2's Relu). Y may be X (in-place).
#ifndef BRAID_OPS_MATH_RELU_OP_H_
#define BRAID_OPS_MATH_RELU_OP_H_

#include "runtime/operator.h"

namespace braid {

class ReluOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_RELU_OP_H_
