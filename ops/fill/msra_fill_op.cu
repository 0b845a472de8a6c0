// MSRAFill on CUDA devices (ops/fill/msra_fill_op.h): cuRAND normals N(0, 2 / fan_in) from a
// generator reseeded from the op's rng() every run (ops/fill/cuda_fill.h). input_as_shape is
// refused when the op is built.
#include <cmath>

#include "ops/fill/cuda_fill.h"
#include "ops/fill/msra_fill_op.h"
#include "ops/fill/xavier_fill_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class MSRAFillCudaOp final : public MSRAFillOp {
 public:
  MSRAFillCudaOp(const OperatorDef& def, Workspace* ws) : MSRAFillOp(def, ws) {
    RefuseShapeFromDevice(*this);
  }

 protected:
  void Fill(Tensor* output) override {
    const int64_t fan_in = FanIn(def().output(0), output->shape());
    float* data = output->mutable_data<float>();
    if (fan_in == 0) return;  // then the output is empty
    QueueNormal(random_.Reseeded(rng()), data, output->numel(), 0.f,
                std::sqrt(2.f / static_cast<float>(fan_in)));
  }

 private:
  OpRandomGenerator random_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(MSRAFill, kCuda, "", MSRAFillCudaOp);

}  // namespace braid
