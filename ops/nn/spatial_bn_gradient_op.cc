#include "ops/nn/spatial_bn_gradient_op.h"

#include <algorithm>
#include <string>

#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"

namespace braid {

SpatialBnShapes ComputeSpatialBnGradientShapes(const OperatorDef& def,
                                               const std::vector<ShapeInfo>& in) {
  SpatialBnShapes s = ComputeSpatialBnShapes(def, in, 0, {1, 3, 4});
  if (in[2].dtype != DType::kFloat32 || in[2].dims != s.x_dims) {
    ThrowInvalidArgument("dY " + DescribeBlob(def.input(2), in[2]) +
                         " must have the type and shape of X " + DescribeBlob(def.input(0), in[0]));
  }
  return s;
}

void SpatialBNGradientOp::Prepare() {
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  shapes_ = ComputeSpatialBnGradientShapes(def(), in);
  shapes_.x_layout = Input(0).layout();
  shapes_.y_layout = Input(2).layout();
  shapes_.dx_layout = RequestedLayout(def(), 0);
  epsilon_ = args().Get<float>("epsilon", 1e-5f);
  const SpatialBnShapes& s = shapes_;
  const float epsilon = epsilon_;
  const std::string key = CacheKey("SpatialBNGradient")
                              .Add(s.DnnlDims())
                              .AddFloat(epsilon)
                              .Add(s.x_layout)
                              .Add(s.y_layout)
                              .Add(s.dx_layout)
                              .str();
  plan_ = PrimitiveCache::Global().GetOrCreate<Plan>(key, [&s, epsilon] {
    Plan plan;
    plan.channel = PlainDesc({s.channels});
    try {
      const dnnl::batch_normalization_forward::primitive_desc hint = MakeBnDesc(s, epsilon, false);
      const dnnl::batch_normalization_backward::primitive_desc pd(
          dnnl::batch_normalization_backward::desc(
              dnnl::prop_kind::backward, hint.dst_desc(), hint.src_desc(), epsilon,
              dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift),
          UserScratchpadAttr(), Engine(), hint);
      plan.src = LayoutBridge(s.Desc(s.x_layout), pd.src_desc(), true);
      plan.diff_dst = LayoutBridge(s.Desc(s.y_layout), pd.diff_dst_desc(), true);
      plan.diff_src = LayoutBridge(s.Desc(s.dx_layout), pd.diff_src_desc(), false);
      plan.backward = DnnlPrimitive::Of<dnnl::batch_normalization_backward>(pd);
    } catch (const dnnl::error& e) {
      ThrowDnnlError(e, "a batch normalization gradient for X " + DimsText(s.x_dims));
    }
    return plan;
  });
  Bind(*plan_);
  prepared_dims_.clear();
  for (const ShapeInfo& info : in) prepared_dims_.push_back(info.dims);
}

void SpatialBNGradientOp::Bind(const Plan& plan) {
  scratch_ = ScratchLayout();
  diff_dst_ = BoundTensor(plan.diff_dst, &scratch_);
  diff_src_ = BoundTensor(plan.diff_src, &scratch_, diff_dst_);  // in place on the blocked buffer
  src_ = BoundTensor(plan.src, &scratch_);
  scale_ = MemoryOf(plan.channel);
  mean_ = MemoryOf(plan.channel);
  variance_buffer_.resize(shapes_.channels);
  variance_ = MemoryOf(plan.channel, variance_buffer_.data());
  diff_scale_ = MemoryOf(plan.channel);
  diff_shift_ = MemoryOf(plan.channel);
  zero_shift_.assign(shapes_.channels, 0.f);
  backward_ = BoundPrimitive(plan.backward, &scratch_);
  const std::pair<int, const dnnl::memory*> args[] = {
      {DNNL_ARG_SRC, &src_.at_primitive()},
      {DNNL_ARG_DIFF_DST, &diff_dst_.at_primitive()},
      {DNNL_ARG_SCALE, &scale_},
      {DNNL_ARG_MEAN, &mean_},
      {DNNL_ARG_VARIANCE, &variance_},
      {DNNL_ARG_DIFF_SRC, &diff_src_.at_primitive()},
      {DNNL_ARG_DIFF_SCALE, &diff_scale_},
      {DNNL_ARG_DIFF_SHIFT, &diff_shift_}};
  for (const auto& [arg, memory] : args) backward_.Bind(arg, *memory);
  backward_.Bind(DNNL_ARG_SHIFT, MemoryOf(plan.channel, zero_shift_.data()));
}

void SpatialBNGradientOp::Run() {
  bool same = plan_ != nullptr && Input(0).layout() == shapes_.x_layout &&
              Input(2).layout() == shapes_.y_layout;
  for (int i = 0; i < 5; ++i) {
    CheckInputType(*this, i, {DType::kFloat32});
    same = same && Input(i).shape() == prepared_dims_[i];
  }
  if (!same) Prepare();
  const int64_t c = shapes_.channels;
  float* dx = Output(0, DType::kFloat32, shapes_.x_dims)->mutable_data<float>();
  Output(0)->set_layout(shapes_.dx_layout);
  float* dscale = Output(1, DType::kFloat32, {c})->mutable_data<float>();
  float* dbias = Output(2, DType::kFloat32, {c})->mutable_data<float>();
  if (Input(0).numel() == 0) {  // an empty batch contributes nothing
    std::fill_n(dscale, c, 0.f);
    std::fill_n(dbias, c, 0.f);
    return;
  }
  const float* inv_std = Input(4).data<float>();
  float* variance = variance_buffer_.data();
  for (int64_t i = 0; i < c; ++i) variance[i] = 1.f / (inv_std[i] * inv_std[i]) - epsilon_;
  src_.Point(Input(0).any_layout_data<float>());
  diff_dst_.Point(Input(2).any_layout_data<float>());
  Point(scale_, Input(1).data<float>());
  Point(mean_, Input(3).data<float>());
  diff_src_.Point(dx);
  Point(diff_scale_, dscale);
  Point(diff_shift_, dbias);
  scratch_.Place();
  src_.Reorder();
  diff_dst_.Reorder();
  backward_.Run();
  diff_src_.Reorder();
}

BRAID_OPERATOR_SCHEMA(SpatialBNGradient)
    .ArgsOf("SpatialBN")
    .NumInputs(5)
    .NumOutputs(3)
    .BlockedPorts([](const OperatorDef&) { return DnnlLayoutPorts({0, 2}, {0}); })
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 5) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const SpatialBnShapes s = ComputeSpatialBnGradientShapes(def, in);
      return std::vector<ShapeInfo>{{DType::kFloat32, s.x_dims, true},
                                    {DType::kFloat32, {s.channels}, true},
                                    {DType::kFloat32, {s.channels}, true}};
    })
    .AllocatesLazily()  // plans, JIT code and buffers on the first run of a shape
    .SetDoc(
        "Gradient of training-mode SpatialBN: X, scale, dY, saved_mean, saved_inv_var -> dX, "
        "dscale, dbias. Arg: epsilon (the forward's).");

BRAID_REGISTER_CPU_OPERATOR(SpatialBNGradient, SpatialBNGradientOp);

}  // namespace braid
