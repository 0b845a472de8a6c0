// UniformIntFill: output 0 (int32) filled with integers uniform in [`min`, `max`], both included
// (Caffe2's UniformIntFill; defaults 0 and 1). The shape follows FillOp (ops/fill/fill_op.h);
// samples come from the op's rng(), so they depend only on the seed (or output name).
#ifndef BRAID_OPS_FILL_UNIFORM_INT_FILL_OP_H_
#define BRAID_OPS_FILL_UNIFORM_INT_FILL_OP_H_

#include <cstdint>

#include "ops/fill/fill_op.h"

namespace braid {

// Not final: the CUDA kernel (uniform_int_fill_op.cu) derives from it to share the argument checks.
class UniformIntFillOp : public FillOp {
 public:
  UniformIntFillOp(const OperatorDef& def, Workspace* ws);

 protected:
  void Fill(Tensor* output) override;

  // The checked arguments, read by the CUDA kernel too.
  int32_t min_;
  int32_t max_;
};

}  // namespace braid

#endif  // BRAID_OPS_FILL_UNIFORM_INT_FILL_OP_H_
