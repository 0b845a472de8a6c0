// Copy: output 0 becomes a copy of input 0, any element type (Caffe2's Copy, on CPU). As in
// Caffe2, Y may not be X. Its gradient is a Copy of dY.
#ifndef BRAID_OPS_MATH_COPY_OP_H_
#define BRAID_OPS_MATH_COPY_OP_H_

#include "runtime/operator.h"

namespace braid {

class CopyOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_COPY_OP_H_
