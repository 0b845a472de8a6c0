#include "ops/detection/roi_align_op.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

struct RoIAlignParams {
  float spatial_scale = 1.f;
  int64_t pooled_h = 1, pooled_w = 1;
  int64_t sampling_ratio = -1;
  bool aligned = false;
};

RoIAlignParams ReadRoIAlignParams(const OperatorDef& def) {
  const ArgumentReader args(def.arg());
  const std::string op = def.type() + ": ";
  const std::string order = args.Get<std::string>("order", "NCHW");
  if (order != "NCHW")
    ThrowInvalidArgument(op + "order '" + order + "' is not supported, only NCHW");
  RoIAlignParams p;
  p.spatial_scale = args.Get<float>("spatial_scale", 1.f);
  p.pooled_h = args.Get<int64_t>("pooled_h", 1);
  p.pooled_w = args.Get<int64_t>("pooled_w", 1);
  p.sampling_ratio = args.Get<int64_t>("sampling_ratio", -1);
  const int64_t aligned = args.Get<int64_t>("aligned", 0);
  if (!(p.spatial_scale > 0.f) || !std::isfinite(p.spatial_scale)) {
    ThrowInvalidArgument(op + "spatial_scale " + std::to_string(p.spatial_scale) +
                         " must be finite and > 0");
  }
  if (p.pooled_h < 1 || p.pooled_w < 1) {
    ThrowInvalidArgument(op + "pooled_h " + std::to_string(p.pooled_h) + " and pooled_w " +
                         std::to_string(p.pooled_w) + " must be >= 1");
  }
  if (p.sampling_ratio < -1) {
    ThrowInvalidArgument(op + "sampling_ratio " + std::to_string(p.sampling_ratio) +
                         " must be >= 1, or -1 or 0 for ceil(roi size / pooled size)");
  }
  if (aligned != 0 && aligned != 1) {
    ThrowInvalidArgument(op + "aligned " + std::to_string(aligned) + " must be 0 or 1");
  }
  p.aligned = aligned == 1;
  return p;
}

// Checks X (input 0) and RoIs (input 1); returns Y's dims.
std::vector<int64_t> RoIAlignOutputDims(const OperatorDef& def, const RoIAlignParams& p,
                                        const ShapeInfo& x, const ShapeInfo& rois) {
  const std::string op = def.type() + ": ";
  if (x.dtype != DType::kFloat32 || x.dims.size() != 4 || x.dims[2] < 1 || x.dims[3] < 1) {
    ThrowInvalidArgument(op + "X " + DescribeBlob(def.input(0), x) +
                         " must be a float32 4-D tensor (NCHW) with H, W >= 1");
  }
  const bool rois_ok = rois.dtype == DType::kFloat32 && rois.dims.size() == 2 &&
                       (rois.dims[1] == 5 || (rois.dims[1] == 4 && x.dims[0] == 1));
  if (!rois_ok) {
    ThrowInvalidArgument(op + "RoIs " + DescribeBlob(def.input(1), rois) +
                         " must be float32 (R, 5) rows [batch_index, x1, y1, x2, y2], or (R, 4) "
                         "when X " +
                         DescribeBlob(def.input(0), x) + " holds one image");
  }
  return {rois.dims[0], x.dims[1], p.pooled_h, p.pooled_w};
}

// One coordinate of a bilinear sample: the two rows (columns) it reads and their weights; both
// weights 0 for a sample outside [-1, size].
struct AxisTap {
  int64_t low = 0, high = 0;
  float w_low = 0.f, w_high = 0.f;
};

AxisTap MakeAxisTap(float v, int64_t size) {
  AxisTap t;
  if (v < -1.f || v > static_cast<float>(size)) return t;
  if (v <= 0.f) v = 0.f;
  t.low = static_cast<int64_t>(v);
  if (t.low >= size - 1) {
    t.low = t.high = size - 1;
    v = static_cast<float>(t.low);
  } else {
    t.high = t.low + 1;
  }
  const float frac = v - static_cast<float>(t.low);
  t.w_low = 1.f - frac;
  t.w_high = frac;
  return t;
}

// Where one RoI samples: its image, and per output row (column) the taps of its grid rows
// (columns), row ph's at [ph * grid_h, (ph + 1) * grid_h).
struct RoISamples {
  int64_t image = 0;
  int64_t grid_h = 0, grid_w = 0;
  std::vector<AxisTap> rows, cols;
  float count = 1.f;  // samples per bin, at least 1
};

// The taps of one axis: `pooled` bins of `grid` samples from `start` over `extent`.
std::vector<AxisTap> AxisTaps(float start, float extent, int64_t pooled, int64_t grid,
                              int64_t size) {
  const float bin = extent / static_cast<float>(pooled);
  std::vector<AxisTap> taps;
  taps.reserve(static_cast<size_t>(pooled * grid));
  for (int64_t b = 0; b < pooled; ++b) {
    for (int64_t s = 0; s < grid; ++s) {
      const float v = start + static_cast<float>(b) * bin +
                      static_cast<float>(s + .5f) * bin / static_cast<float>(grid);
      taps.push_back(MakeAxisTap(v, size));
    }
  }
  return taps;
}

RoISamples PlanRoI(const OperatorBase& op, const RoIAlignParams& p, int64_t r) {
  const Tensor& rois_t = op.Input(1);
  const std::vector<int64_t>& x_dims = op.Input(0).shape();
  const int64_t cols = rois_t.shape()[1];
  const float* roi = rois_t.data<float>() + r * cols;
  const std::string where =
      op.type() + ": RoIs '" + op.def().input(1) + "' row " + std::to_string(r);
  RoISamples s;
  if (cols == 5) {
    const float b = roi[0];
    if (!(b >= 0.f && b < static_cast<float>(x_dims[0]) && b == std::floor(b))) {
      ThrowInvalidArgument(where + " has batch index " + std::to_string(b) +
                           "; X holds images 0.." + std::to_string(x_dims[0] - 1));
    }
    s.image = static_cast<int64_t>(b);
    ++roi;
  }
  if (!(std::isfinite(roi[0]) && std::isfinite(roi[1]) && std::isfinite(roi[2]) &&
        std::isfinite(roi[3]))) {
    ThrowInvalidArgument(where + " has a non-finite coordinate");
  }
  const float offset = p.aligned ? 0.5f : 0.f;
  const float x1 = roi[0] * p.spatial_scale - offset, y1 = roi[1] * p.spatial_scale - offset;
  float width = roi[2] * p.spatial_scale - offset - x1;
  float height = roi[3] * p.spatial_scale - offset - y1;
  if (!p.aligned) {
    width = std::max(width, 1.f);
    height = std::max(height, 1.f);
  } else if (width < 0.f || height < 0.f) {
    ThrowInvalidArgument(where + " has x2 < x1 or y2 < y1, refused with aligned=1");
  }
  s.grid_h = p.sampling_ratio > 0
                 ? p.sampling_ratio
                 : static_cast<int64_t>(std::ceil(height / static_cast<float>(p.pooled_h)));
  s.grid_w = p.sampling_ratio > 0
                 ? p.sampling_ratio
                 : static_cast<int64_t>(std::ceil(width / static_cast<float>(p.pooled_w)));
  s.count = static_cast<float>(std::max<int64_t>(s.grid_h * s.grid_w, 1));
  s.rows = AxisTaps(y1, height, p.pooled_h, s.grid_h, x_dims[2]);
  s.cols = AxisTaps(x1, width, p.pooled_w, s.grid_w, x_dims[3]);
  return s;
}

// Calls visit(offset, weight) for the four pixels (offsets in a plane) of every sample of bin
// (ph, pw), in Caffe2's order.
template <typename Visit>
void ForEachSample(const RoISamples& s, int64_t ph, int64_t pw, int64_t width, Visit&& visit) {
  for (int64_t iy = 0; iy < s.grid_h; ++iy) {
    const AxisTap& y = s.rows[ph * s.grid_h + iy];
    for (int64_t ix = 0; ix < s.grid_w; ++ix) {
      const AxisTap& x = s.cols[pw * s.grid_w + ix];
      visit(y.low * width + x.low, y.w_low * x.w_low, y.low * width + x.high, y.w_low * x.w_high,
            y.high * width + x.low, y.w_high * x.w_low, y.high * width + x.high,
            y.w_high * x.w_high);
    }
  }
}

// RoIAlignGradient's inputs X, RoIs, dY: dY must have RoIAlign's output shape.
void CheckRoIAlignGradientShapes(const OperatorDef& def, const RoIAlignParams& p,
                                 const std::vector<ShapeInfo>& in) {
  const std::vector<int64_t> y_dims = RoIAlignOutputDims(def, p, in[0], in[1]);
  if (in[2].dtype != DType::kFloat32 || in[2].dims != y_dims) {
    ThrowInvalidArgument(def.type() + ": dY " + DescribeBlob(def.input(2), in[2]) +
                         " must be float32" + DimsText(y_dims) + ", RoIAlign's output shape");
  }
}

GradientOps RoIAlignGradientMaker(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false, false}};
  return {{MakeGradientOp(r.op, "RoIAlignGradient",
                          {r.op.input(0), r.op.input(1), r.output_grads[0]}, {r.input_grads[0]})},
          {true, false}};
}

}  // namespace

void RoIAlignOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  const RoIAlignParams p = ReadRoIAlignParams(def());
  const std::vector<int64_t> y_dims =
      RoIAlignOutputDims(def(), p, ShapeOf(Input(0)), ShapeOf(Input(1)));
  const std::vector<int64_t>& x_dims = Input(0).shape();
  const int64_t channels = x_dims[1], plane = x_dims[2] * x_dims[3], width = x_dims[3];
  const float* x = Input(0).data<float>();
  float* y = Output(0, DType::kFloat32, y_dims)->mutable_data<float>();
  for (int64_t r = 0; r < y_dims[0]; ++r) {
    const RoISamples s = PlanRoI(*this, p, r);
    for (int64_t c = 0; c < channels; ++c) {
      const float* in = x + (s.image * channels + c) * plane;
      for (int64_t ph = 0; ph < p.pooled_h; ++ph) {
        for (int64_t pw = 0; pw < p.pooled_w; ++pw) {
          float sum = 0.f;
          ForEachSample(
              s, ph, pw, width,
              [&](int64_t o1, float w1, int64_t o2, float w2, int64_t o3, float w3, int64_t o4,
                  float w4) { sum += w1 * in[o1] + w2 * in[o2] + w3 * in[o3] + w4 * in[o4]; });
          *y++ = sum / s.count;
        }
      }
    }
  }
}

void RoIAlignGradientOp::Run() {
  for (int i = 0; i < 3; ++i) CheckInputType(*this, i, {DType::kFloat32});
  const RoIAlignParams p = ReadRoIAlignParams(def());
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  CheckRoIAlignGradientShapes(def(), p, in);
  const int64_t rois = in[1].dims[0];
  const std::vector<int64_t>& x_dims = in[0].dims;
  const int64_t channels = x_dims[1], plane = x_dims[2] * x_dims[3], width = x_dims[3];
  const float* dy = Input(2).data<float>();
  Tensor* out = Output(0, DType::kFloat32, x_dims);
  float* dx = out->mutable_data<float>();
  std::fill_n(dx, out->numel(), 0.f);
  for (int64_t r = 0; r < rois; ++r) {
    const RoISamples s = PlanRoI(*this, p, r);
    for (int64_t c = 0; c < channels; ++c) {
      float* grad = dx + (s.image * channels + c) * plane;
      for (int64_t ph = 0; ph < p.pooled_h; ++ph) {
        for (int64_t pw = 0; pw < p.pooled_w; ++pw) {
          const float g = *dy++ / s.count;
          ForEachSample(s, ph, pw, width,
                        [&](int64_t o1, float w1, int64_t o2, float w2, int64_t o3, float w3,
                            int64_t o4, float w4) {
                          grad[o1] += g * w1;
                          grad[o2] += g * w2;
                          grad[o3] += g * w3;
                          grad[o4] += g * w4;
                        });
        }
      }
    }
  }
}

BRAID_OPERATOR_SCHEMA(RoIAlign)
    .NumInputs(2)
    .NumOutputs(1)
    .Arg("spatial_scale", ArgKind::kFloat)
    .Arg("pooled_h", ArgKind::kInt)
    .Arg("pooled_w", ArgKind::kInt)
    .Arg("sampling_ratio", ArgKind::kInt)
    .Arg("aligned", ArgKind::kInt)
    .Arg("order", ArgKind::kString)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 2) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const RoIAlignParams p = ReadRoIAlignParams(def);
      return std::vector<ShapeInfo>{
          {DType::kFloat32, RoIAlignOutputDims(def, p, in[0], in[1]), true}};
    })
    .SetDoc(
        "Bilinear RoI pooling, NCHW: X [N,C,H,W], RoIs [R,5] (batch_index,x1,y1,x2,y2) -> "
        "[R,C,pooled_h,pooled_w]. Args: spatial_scale 1, pooled_h 1, pooled_w 1, "
        "sampling_ratio -1 (adaptive), aligned 0, order NCHW.");

BRAID_OPERATOR_SCHEMA(RoIAlignGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .ArgsOf("RoIAlign")
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 3) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const RoIAlignParams p = ReadRoIAlignParams(def);
      CheckRoIAlignGradientShapes(def, p, in);
      return std::vector<ShapeInfo>{{DType::kFloat32, in[0].dims, true}};
    })
    .SetDoc("RoIAlign's gradient: inputs X, RoIs, dY; output dX. RoIAlign's arguments.");

BRAID_REGISTER_CPU_OPERATOR(RoIAlign, RoIAlignOp);
BRAID_REGISTER_CPU_OPERATOR(RoIAlignGradient, RoIAlignGradientOp);
BRAID_REGISTER_GRADIENT(RoIAlign, RoIAlignGradientMaker);

}  // namespace braid
