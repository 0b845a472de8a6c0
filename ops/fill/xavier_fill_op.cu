// XavierFill on CUDA devices (ops/fill/xavier_fill_op.h): cuRAND uniforms mapped onto
// [-sqrt(3 / fan_in), sqrt(3 / fan_in)], from a generator reseeded from the op's rng() every run
// (ops/fill/cuda_fill.h). input_as_shape is refused when the op is built.
#include <cmath>

#include "ops/fill/cuda_fill.h"
#include "ops/fill/xavier_fill_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class XavierFillCudaOp final : public XavierFillOp {
 public:
  XavierFillCudaOp(const OperatorDef& def, Workspace* ws) : XavierFillOp(def, ws) {
    RefuseShapeFromDevice(*this);
  }

 protected:
  void Fill(Tensor* output) override {
    const int64_t fan_in = FanIn(def().output(0), output->shape());
    float* data = output->mutable_data<float>();
    if (fan_in == 0) return;  // then the output is empty
    const float scale = std::sqrt(3.f / static_cast<float>(fan_in));
    QueueUniform(random_.Reseeded(rng()), data, output->numel(), -scale, scale);
  }

 private:
  OpRandomGenerator random_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(XavierFill, kCuda, "", XavierFillCudaOp);

}  // namespace braid
