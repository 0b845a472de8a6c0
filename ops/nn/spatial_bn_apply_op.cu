// SpatialBNApply on CUDA devices (ops/nn/spatial_bn_apply_op.h): one elementwise kernel,
// Y = (X - mean) * (inv_std * scale) + bias (+ residual), max(Y, 0) with relu=1, in the CPU op's
// order of operations. CUDA tensors are plain, so there is no layout to mix; Y may be X or the
// residual (in place).
#include <vector>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/nn/spatial_bn_cuda.cuh"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

class SpatialBNApplyCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    bool same = static_cast<int>(prepared_dims_.size()) == InputSize();
    for (int i = 0; i < InputSize(); ++i) {
      CheckInputType(*this, i, {DType::kFloat32});
      same = same && Input(i).shape() == prepared_dims_[i];
    }
    if (!same) {
      FindSchema(type())->InferShapes(def(), InputShapeInfos(*this));  // the CPU op's checks
      prepared_dims_.clear();
      for (int i = 0; i < InputSize(); ++i) prepared_dims_.push_back(Input(i).shape());
    }
    const Tensor& x = Input(0);
    BnAffineArgs a;
    a.x = x.data<float>();  // inputs before Y's write: Y may be X or the residual
    a.scale = Input(1).data<float>();
    a.bias = Input(2).data<float>();
    a.mean = Input(3).data<float>();
    a.inv_std = Input(4).data<float>();
    if (InputSize() == 6) a.residual = Input(5).data<float>();
    a.channels = x.dim(1);
    a.spatial = SizeFromDim(x.shape(), 2);
    a.total = x.numel();
    a.y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    LaunchBnAffine(a, args().Get<bool>("relu", false));
  }

 private:
  std::vector<std::vector<int64_t>> prepared_dims_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(SpatialBNApply, kCuda, "", SpatialBNApplyCudaOp);

}  // namespace braid
