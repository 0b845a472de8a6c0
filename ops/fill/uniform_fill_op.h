// UniformFill: output 0 (float32) filled with samples uniform in [`min`, `max`] (Caffe2's
// UniformFill; defaults 0 and 1). The shape follows FillOp (ops/fill/fill_op.h); samples come from
// the op's rng(), so they depend only on the seed (or output name), never on the schedule.
#ifndef BRAID_OPS_FILL_UNIFORM_FILL_OP_H_
#define BRAID_OPS_FILL_UNIFORM_FILL_OP_H_

#include "ops/fill/fill_op.h"

namespace braid {

// Not final: the CUDA kernel (uniform_fill_op.cu) derives from it to share the argument checks.
class UniformFillOp : public FillOp {
 public:
  UniformFillOp(const OperatorDef& def, Workspace* ws);

 protected:
  void Fill(Tensor* output) override;

  // The checked arguments, read by the CUDA kernel too.
  float min_;
  float max_;
};

}  // namespace braid

#endif  // BRAID_OPS_FILL_UNIFORM_FILL_OP_H_
