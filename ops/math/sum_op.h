// Sum: Y = X0 + X1 + ... elementwise over one or more inputs of one type (float32, int32 or
// int64) and one shape (Caffe2's Sum). Y may be X0 (in-place accumulation). Each input's gradient
// is a Copy of dY.
#ifndef BRAID_OPS_MATH_SUM_OP_H_
#define BRAID_OPS_MATH_SUM_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class SumOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;

 private:
  template <typename T>
  void RunTyped();
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_SUM_OP_H_
