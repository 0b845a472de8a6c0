// XavierFill: output 0 (float32) filled uniformly in [-s, s], s = sqrt(3 / fan_in) (Caffe2's
// XavierFill), where fan_in = numel / shape[0]: the inputs of one output unit for an FC weight
// [N, K] (K) or a conv weight [M, C, kH, kW] (C kH kW). The shape follows FillOp
// (ops/fill/fill_op.h) and must have at least one dim; samples come from the op's rng(), so they
// depend only on the seed (or output name).
//
//   op { type: "XavierFill" output: "fc_w" arg { name: "shape" ints: 10 ints: 784 } }
//
// FanIn and InferFanInFillShape are shared with MSRAFill.
#ifndef BRAID_OPS_FILL_XAVIER_FILL_OP_H_
#define BRAID_OPS_FILL_XAVIER_FILL_OP_H_

#include <cstdint>
#include <vector>

#include "ops/fill/fill_op.h"

namespace braid {

// numel / dims[0]; throws braid::Error naming `output` for a scalar shape. 0 for an empty shape.
int64_t FanIn(const std::string& output, const std::vector<int64_t>& dims);
// Fill shape inference (float32) that also rejects scalar shapes, which have no fan-in.
std::vector<ShapeInfo> InferFanInFillShape(const OperatorDef& def,
                                           const std::vector<ShapeInfo>& in);

// Not final: the CUDA kernel (xavier_fill_op.cu) derives from it to share the argument checks.
class XavierFillOp : public FillOp {
 public:
  XavierFillOp(const OperatorDef& def, Workspace* ws) : FillOp(def, ws, DType::kFloat32) {}

 protected:
  void Fill(Tensor* output) override;
};

}  // namespace braid

#endif  // BRAID_OPS_FILL_XAVIER_FILL_OP_H_
