// FloatToHalf and HalfToFloat (Caffe2's): Y = X converted between float32 and float16,
// elementwise. To float16 rounds to the nearest half, ties to even (beyond 65504: infinity);
// to float32 is exact (include/braid/dtype.h). X of the other dtype is refused, naming it.
// Each is the other's gradient. CPU kernels (a sim device runs them too).
//
//   X float32 [0.1, 70000]   FloatToHalf -> Y float16 [0.0999755859375, inf]
//   Y                        HalfToFloat -> float32 [0.0999755859375, inf]
#ifndef BRAID_OPS_TENSOR_FLOAT_HALF_OPS_H_
#define BRAID_OPS_TENSOR_FLOAT_HALF_OPS_H_

#include "runtime/core/operator.h"

namespace braid {

class FloatToHalfOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class HalfToFloatOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_FLOAT_HALF_OPS_H_
