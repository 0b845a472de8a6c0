// MSRAFill: output 0 (float32) filled with samples of N(0, 2 / fan_in), He et al.'s
// initialisation for ReLU layers, with fan_in = numel / shape[0] as in XavierFill
// (ops/fill/xavier_fill_op.h). Caffe2's MSRAFill uses fan_out = numel / shape[1] instead; braid
// keeps the fan-in form of the paper. The shape follows FillOp (ops/fill/fill_op.h) and must have
// at least one dim; samples come from the op's rng(), so they depend only on the seed (or output
// name).
//
//   op { type: "MSRAFill" output: "conv1_w" arg { name: "shape" ints: 16 ints: 3 ints: 3 ints: 3 }
//   }
#ifndef BRAID_OPS_FILL_MSRA_FILL_OP_H_
#define BRAID_OPS_FILL_MSRA_FILL_OP_H_

#include "ops/fill/fill_op.h"

namespace braid {

// Not final: the CUDA kernel (msra_fill_op.cu) derives from it to share the argument checks.
class MSRAFillOp : public FillOp {
 public:
  MSRAFillOp(const OperatorDef& def, Workspace* ws) : FillOp(def, ws, DType::kFloat32) {}

 protected:
  void Fill(Tensor* output) override;
};

}  // namespace braid

#endif  // BRAID_OPS_FILL_MSRA_FILL_OP_H_
