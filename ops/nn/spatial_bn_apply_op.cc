#include "ops/nn/spatial_bn_apply_op.h"

#include <algorithm>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "ops/nn/dnnl_util.h"
#include "ops/nn/spatial_bn_op.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

// Per-channel constants: y = (x - mean[c]) * a[c] + b[c] (+ residual), then max(., 0) if kRelu.
struct Affine {
  std::vector<float> mean, a, b;
};

template <bool kRelu>
float ApplyOne(float x, float m, float a, float b, const float* residual, int64_t at) {
  float v = (x - m) * a + b;
  if (residual != nullptr) v += residual[at];
  return kRelu ? std::max(v, 0.f) : v;
}

// X, Y and the residual blocked by kBlock channels: a pass in memory order, in runs of one
// pixel's kBlock channels.
template <bool kRelu, int64_t kBlock>
void ApplyBlocked(const float* x, const Affine& f, const float* residual, int64_t c,
                  int64_t spatial, int64_t n, float* y) {
  const float* mean = f.mean.data();
  const float* a = f.a.data();
  const float* b = f.b.data();
  const int64_t blocks = c / kBlock;
  // ParallelFor cuts ranges on 64-byte lines (its contract, ops/common/parallel.h), 16 floats, a
  // multiple of the block: every range starts at a pixel's lane 0 and ends at one (n is a
  // multiple of the block).
  static_assert(64 % (kBlock * sizeof(float)) == 0);
  ParallelFor(n, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin / kBlock; p < end / kBlock;) {
      const int64_t plane = p / spatial;  // (sample, channel block)
      const int64_t stop = std::min(end / kBlock, (plane + 1) * spatial);
      const int64_t ch = plane % blocks * kBlock;
      for (; p < stop; ++p) {
        for (int64_t l = 0; l < kBlock; ++l) {
          const int64_t i = p * kBlock + l;
          y[i] = ApplyOne<kRelu>(x[i], mean[ch + l], a[ch + l], b[ch + l], residual, i);
        }
      }
    }
  });
}

// X, Y and the residual in one layout: a pass in memory order, in runs of elements of one
// channel (a plane when plain) or of one pixel's block of channels (blocked).
template <bool kRelu>
void ApplySameLayout(const float* x, const Affine& f, const float* residual, int64_t c,
                     int64_t spatial, int64_t n, Layout layout, float* y) {
  if (layout == Layout::kBlocked8) return ApplyBlocked<kRelu, 8>(x, f, residual, c, spatial, n, y);
  if (layout == Layout::kBlocked16) {
    return ApplyBlocked<kRelu, 16>(x, f, residual, c, spatial, n, y);
  }
  const float* mean = f.mean.data();
  const float* a = f.a.data();
  const float* b = f.b.data();
  ParallelFor(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end;) {
      const int64_t plane = i / spatial;
      const int64_t stop = std::min(end, (plane + 1) * spatial);
      const int64_t ch = plane % c;
      for (; i < stop; ++i) y[i] = ApplyOne<kRelu>(x[i], mean[ch], a[ch], b[ch], residual, i);
    }
  });
}

// Any mix of layouts: element by element through each tensor's offsets.
template <bool kRelu>
void ApplyMixedLayouts(const float* x, Layout x_layout, const Affine& f, const float* residual,
                       Layout r_layout, int64_t c, int64_t spatial, int64_t batch,
                       Layout y_layout, float* y) {
  ParallelFor(batch * c, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / c, ch = plane % c;
      for (int64_t hw = 0; hw < spatial; ++hw) {
        const float v =
            ApplyOne<kRelu>(x[NchwOffset(x_layout, n, ch, hw, c, spatial)], f.mean[ch], f.a[ch],
                            f.b[ch], residual, NchwOffset(r_layout, n, ch, hw, c, spatial));
        y[NchwOffset(y_layout, n, ch, hw, c, spatial)] = v;
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
  const bool has_residual = InputSize() == 6;
  // Layouts before the write (Y may be X or the residual).
  const Layout x_layout = x.layout();
  const Layout r_layout = has_residual ? Input(5).layout() : x_layout;
  const Layout y_layout = RequestedLayout(def(), 0);
  const float* xs = x.any_layout_data<float>();
  const float* residual = has_residual ? Input(5).any_layout_data<float>() : nullptr;
  Affine f;
  f.mean.assign(Input(3).data<float>(), Input(3).data<float>() + s.channels);
  f.a.resize(s.channels);
  f.b.assign(Input(2).data<float>(), Input(2).data<float>() + s.channels);
  for (int64_t ch = 0; ch < s.channels; ++ch) {
    f.a[ch] = Input(4).data<float>()[ch] * Input(1).data<float>()[ch];
  }
  const bool same_layout = x_layout == y_layout && r_layout == y_layout;
  const bool in_place = Output(0) == &x || (has_residual && Output(0) == &Input(5));
  if (!same_layout && in_place) {
    ThrowInvalidArgument("SpatialBNApply runs in place only when X, residual and Y share a layout");
  }
  Tensor* out = Output(0, DType::kFloat32, s.x_dims);
  float* y = out->mutable_data<float>();
  out->set_layout(y_layout);  // before writing: throws for a Y that cannot be blocked
  const bool relu = args().Get<bool>("relu", false);
  if (same_layout) {
    (relu ? ApplySameLayout<true> : ApplySameLayout<false>)(xs, f, residual, s.channels,
                                                            s.spatial, x.numel(), y_layout, y);
  } else {
    (relu ? ApplyMixedLayouts<true> : ApplyMixedLayouts<false>)(
        xs, x_layout, f, residual, r_layout, s.channels, s.spatial, s.x_dims[0], y_layout, y);
  }
}

BRAID_OPERATOR_SCHEMA(SpatialBNApply)
    .Arg("order", ArgKind::kString)
    .Arg("relu", ArgKind::kInt)
    .NumInputs(5, 6)
    .NumOutputs(1)
    .AllowInplace({{0, 0}, {5, 0}})
    .BlockedPorts([](const OperatorDef&) { return DnnlLayoutPorts({0, 5}, {0}); })
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
