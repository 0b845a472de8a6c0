// GaussianFill on CUDA devices (ops/fill/gaussian_fill_op.h): cuRAND normals from a generator
// reseeded from the op's rng() every run (ops/fill/cuda_fill.h); std = 0 writes the mean, as on
// the CPU. input_as_shape is refused when the op is built.
#include "ops/fill/cuda_fill.h"
#include "ops/fill/gaussian_fill_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class GaussianFillCudaOp final : public GaussianFillOp {
 public:
  GaussianFillCudaOp(const OperatorDef& def, Workspace* ws) : GaussianFillOp(def, ws) {
    RefuseShapeFromDevice(*this);
  }

 protected:
  void Fill(Tensor* output) override {
    float* data = output->mutable_data<float>();
    const int64_t n = output->numel();
    if (std_ == 0) return QueueConstant(data, n, mean_);
    if (n > 0) QueueNormal(random_.Reseeded(rng()), data, n, mean_, std_);
  }

 private:
  OpRandomGenerator random_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(GaussianFill, kCuda, "", GaussianFillCudaOp);

}  // namespace braid
