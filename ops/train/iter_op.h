// Iter: the training iteration counter, incremented by one per run (Caffe2's Iter).
//
// The counter is an int64 with one element, read and written in place: input 0 and output 0 must
// name the same blob (conventionally "iter", or Caffe2's "optimizer_iteration"). Initialise it with
//   op { type: "ConstantFill" output: "iter" arg { name: "shape" ints: 1 }
//        arg { name: "value" i: 0 } arg { name: "dtype" i: 10 } }   # INT64
// as Caffe2 requires; as a convenience, a counter blob that was never written (or an Iter with no
// input, Caffe2's old form) starts from 0 as int64 [1]. Either way the first run leaves 1.
// Incrementing past INT64_MAX is an error. No gradient.
#ifndef BRAID_OPS_TRAIN_ITER_OP_H_
#define BRAID_OPS_TRAIN_ITER_OP_H_

#include <vector>

#include "runtime/core/operator.h"

namespace braid {

// The counter's shape: int64 [1] when the op has no input, else the input's, which must be one
// int64 (throws braid::Error otherwise). Shared with the CUDA kernel.
ShapeInfo IterCounterShape(const OperatorDef& def, const std::vector<ShapeInfo>& in);

class IterOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TRAIN_ITER_OP_H_
