// UniformIntFill on CUDA devices (ops/fill/uniform_int_fill_op.h): int32 uniform in [min, max],
// both included, from 64 cuRAND bits per sample (ops/fill/cuda_fill.h), with a generator reseeded
// from the op's rng() every run. input_as_shape is refused when the op is built.
#include "ops/fill/cuda_fill.h"
#include "ops/fill/uniform_int_fill_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class UniformIntFillCudaOp final : public UniformIntFillOp {
 public:
  UniformIntFillCudaOp(const OperatorDef& def, Workspace* ws) : UniformIntFillOp(def, ws) {
    RefuseShapeFromDevice(*this);
  }

 protected:
  void Fill(Tensor* output) override {
    int32_t* data = output->mutable_data<int32_t>();
    if (output->numel() > 0) {
      QueueUniformInt(random_.Reseeded(rng()), data, output->numel(), min_, max_);
    }
  }

 private:
  OpRandomGenerator random_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(UniformIntFill, kCuda, "", UniformIntFillCudaOp);

}  // namespace braid
