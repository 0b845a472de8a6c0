#include "ops/nn/spatial_bn_apply_op.h"

#include <algorithm>

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "ops/nn/spatial_bn_op.h"
#include "runtime/gradient.h"
#include "runtime/op_registry.h"
#include "runtime/op_schema.h"

namespace braid {
namespace {

// Y over planes of `spatial` elements, plane p in channel p % c; `residual` may be null.
template <bool kRelu>
void Apply(const float* x, const float* scale, const float* bias, const float* mean,
           const float* inv_std, const float* residual, int64_t c, int64_t spatial, int64_t n,
           float* y) {
  ParallelFor(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end;) {
      const int64_t plane = i / spatial;
      const int64_t stop = std::min(end, (plane + 1) * spatial);
      const int64_t ch = plane % c;
      const float m = mean[ch], a = inv_std[ch] * scale[ch], b = bias[ch];
      for (; i < stop; ++i) {
        float v = (x[i] - m) * a + b;
        if (residual != nullptr) v += residual[i];
        y[i] = kRelu ? std::max(v, 0.f) : v;
      }
    }
  });
}

SpatialBnShapes ApplyShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  const SpatialBnShapes s = ComputeSpatialBnShapes(def, in, 0, {1, 2, 3, 4});
  if (in.size() == 6 && (in[5].dtype != DType::kFloat32 || in[5].dims != s.x_dims)) {
    ThrowInvalidArgument("residual " + DescribeBlob(def.input(5), in[5]) +
                         " must be float32 of X's shape " + DescribeBlob(def.input(0), in[0]));
  }
  return s;
}

}  // namespace

void SpatialBNApplyOp::Run() {
  for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
  const SpatialBnShapes s = ApplyShapes(def(), InputShapeInfos(*this));
  const Tensor& x = Input(0);
  const float* residual = InputSize() == 6 ? Input(5).data<float>() : nullptr;
  float* y = Output(0, DType::kFloat32, s.x_dims)->mutable_data<float>();
  const auto apply = args().Get<bool>("relu", false) ? Apply<true> : Apply<false>;
  apply(x.data<float>(), Input(1).data<float>(), Input(2).data<float>(), Input(3).data<float>(),
        Input(4).data<float>(), residual, s.channels, s.spatial, x.numel(), y);
}

BRAID_OPERATOR_SCHEMA(SpatialBNApply)
    .NumInputs(5, 6)
    .NumOutputs(1)
    .AllowInplace({{0, 0}, {5, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() < 5) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{{DType::kFloat32, ApplyShapes(def, in).x_dims, true}};
    })
    .SetDoc(
        "Batch normalization with given statistics: X, scale, bias, mean, inv_std, optional "
        "residual -> Y = (X - mean) * inv_std * scale + bias (+ residual) over channel axis 1; "
        "max(Y, 0) with relu=1.");

BRAID_REGISTER_CPU_OPERATOR(SpatialBNApply, SpatialBNApplyOp);
BRAID_NO_GRADIENT(SpatialBNApply);

}  // namespace braid
