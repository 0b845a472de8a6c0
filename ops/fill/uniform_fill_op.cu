// UniformFill on CUDA devices (ops/fill/uniform_fill_op.h): cuRAND uniforms mapped onto
// [min, max], from a generator reseeded from the op's rng() every run (ops/fill/cuda_fill.h).
// input_as_shape is refused when the op is built.
#include "ops/fill/cuda_fill.h"
#include "ops/fill/uniform_fill_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class UniformFillCudaOp final : public UniformFillOp {
 public:
  UniformFillCudaOp(const OperatorDef& def, Workspace* ws) : UniformFillOp(def, ws) {
    RefuseShapeFromDevice(*this);
  }

 protected:
  void Fill(Tensor* output) override {
    float* data = output->mutable_data<float>();
    if (output->numel() > 0) {
      QueueUniform(random_.Reseeded(rng()), data, output->numel(), min_, max_);
    }
  }

 private:
  OpRandomGenerator random_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(UniformFill, kCuda, "", UniformFillCudaOp);

}  // namespace braid
