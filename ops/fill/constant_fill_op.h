// ConstantFill: output 0 filled with `value` (Caffe2's ConstantFill).
//
// The shape follows FillOp (ops/fill/fill_op.h). The element type is the `dtype` argument, in
// Caffe2's TensorProto.DataType numbering (FLOAT=1, INT32=2, BOOL=5, UINT8=6, INT64=10, DOUBLE=13);
// without it, an integer `value` (i) gives INT64 and anything else FLOAT.
//
//   op { type: "ConstantFill" output: "ones" arg { name: "shape" ints: 2 ints: 3 }
//        arg { name: "value" f: 1 } }
#ifndef BRAID_OPS_FILL_CONSTANT_FILL_OP_H_
#define BRAID_OPS_FILL_CONSTANT_FILL_OP_H_

#include <cstdint>

#include "ops/fill/fill_op.h"

namespace braid {

// Not final: the CUDA kernel (constant_fill_op.cu) derives from it to share the argument checks.
class ConstantFillOp : public FillOp {
 public:
  ConstantFillOp(const OperatorDef& def, Workspace* ws);

 protected:
  void Fill(Tensor* output) override;

  // The checked arguments, read by the CUDA kernel too.
  double float_value_ = 0;  // for FLOAT and DOUBLE
  int64_t int_value_ = 0;   // for the integer types and BOOL
};

// The output type of a ConstantFill op; throws braid::Error for an unsupported `dtype`.
DType ConstantFillDType(const OperatorDef& def);

}  // namespace braid

#endif  // BRAID_OPS_FILL_CONSTANT_FILL_OP_H_
