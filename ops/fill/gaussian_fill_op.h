// GaussianFill: output 0 (float32) filled with samples of N(`mean`, `std`^2) (Caffe2's
// GaussianFill; defaults mean 0, std 1). The shape follows FillOp (ops/fill/fill_op.h); samples
// come from the op's rng(), so they depend only on the seed (or output name), never on the
// schedule.
#ifndef BRAID_OPS_FILL_GAUSSIAN_FILL_OP_H_
#define BRAID_OPS_FILL_GAUSSIAN_FILL_OP_H_

#include "ops/fill/fill_op.h"

namespace braid {

// Not final: the CUDA kernel (gaussian_fill_op.cu) derives from it to share the argument checks.
class GaussianFillOp : public FillOp {
 public:
  GaussianFillOp(const OperatorDef& def, Workspace* ws);

 protected:
  void Fill(Tensor* output) override;

  // The checked arguments, read by the CUDA kernel too.
  float mean_;
  float std_;
};

}  // namespace braid

#endif  // BRAID_OPS_FILL_GAUSSIAN_FILL_OP_H_
