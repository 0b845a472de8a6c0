#include "ops/nn/pool_gradient_op.h"

#include <algorithm>

#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"

namespace braid {

PoolShapes ComputePoolGradientShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                     PoolKind kind) {
  PoolShapes s = ComputePoolShapes(def, in[0], kind);
  for (int i = 1; i < 3; ++i) {
    if (in[i].dtype != DType::kFloat32 || in[i].dims != s.y_dims) {
      ThrowInvalidArgument(std::string(i == 1 ? "Y " : "dY ") + DescribeBlob(def.input(i), in[i]) +
                           " must be float32" + DimsText(s.y_dims) + ", the pooled shape of X " +
                           DescribeBlob(def.input(0), in[0]));
    }
  }
  return s;
}

void PoolGradientOp::Prepare() {
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  shapes_ = ComputePoolGradientShapes(def(), in, kind_);
  shapes_.x_layout = Input(0).layout();
  shapes_.y_layout = Input(2).layout();
  shapes_.dx_layout = RequestedLayout(def(), 0);
  const PoolShapes& s = shapes_;
  plan_ = PrimitiveCache::Global().GetOrCreate<Plan>(s.Key(type()), [&s] {
    Plan plan;
    try {
      const auto forward = MakePoolForwardDesc(s, dnnl::prop_kind::forward_training);
      if (s.algorithm == dnnl::algorithm::pooling_max) {
        plan.forward = DnnlPrimitive::Of<dnnl::pooling_forward>(forward);
        plan.workspace = forward.workspace_desc();
      }
      const ConvPoolWindow& w = s.window;
      const dnnl::pooling_backward::primitive_desc backward(
          dnnl::pooling_backward::desc(s.algorithm, forward.src_desc(), forward.dst_desc(),
                                       w.Strides(), w.Kernel(), w.PadBegin(), w.PadEnd()),
          UserScratchpadAttr(), Engine(), forward);
      plan.backward = DnnlPrimitive::Of<dnnl::pooling_backward>(backward);
      plan.src = forward.src_desc();
      plan.dst = forward.dst_desc();
      plan.diff_dst = LayoutBridge(TensorDesc(s.y_dims, s.y_layout), plan.dst, true);
      plan.diff_src = LayoutBridge(TensorDesc(s.x_dims, s.dx_layout), plan.src, false);
    } catch (const dnnl::error& e) {
      ThrowDnnlError(e, "a pooling gradient for X " + DimsText(s.x_dims));
    }
    return plan;
  });
  const Plan& plan = *plan_;
  scratch_ = ScratchLayout();
  diff_dst_ = BoundTensor(plan.diff_dst, &scratch_);
  diff_src_ = BoundTensor(plan.diff_src, &scratch_);
  backward_ = BoundPrimitive(plan.backward, &scratch_);
  backward_.Bind(DNNL_ARG_DIFF_DST, diff_dst_.at_primitive());
  backward_.Bind(DNNL_ARG_DIFF_SRC, diff_src_.at_primitive());
  forward_ = BoundPrimitive();
  if (plan.forward) {
    const dnnl::memory workspace = scratch_.Add(plan.workspace);
    src_ = MemoryOf(plan.src);
    forward_ = BoundPrimitive(plan.forward, &scratch_, backward_);
    forward_.Bind(DNNL_ARG_SRC, src_);
    forward_.Bind(DNNL_ARG_DST, scratch_.Add(plan.dst));
    forward_.Bind(DNNL_ARG_WORKSPACE, workspace);
    backward_.Bind(DNNL_ARG_WORKSPACE, workspace);
  }
  prepared_dims_.clear();
  for (const ShapeInfo& info : in) prepared_dims_.push_back(info.dims);
}

void PoolGradientOp::Run() {
  bool same = plan_ != nullptr && Input(0).layout() == shapes_.x_layout &&
              Input(2).layout() == shapes_.y_layout;
  for (int i = 0; i < 3; ++i) {
    CheckInputType(*this, i, {DType::kFloat32});
    same = same && Input(i).shape() == prepared_dims_[i];
  }
  if (!same) Prepare();
  float* dx = Output(0, DType::kFloat32, shapes_.x_dims)->mutable_data<float>();
  Output(0)->set_layout(shapes_.dx_layout);
  if (Input(2).numel() == 0) {
    std::fill_n(dx, Output(0)->numel(), 0.f);  // zeros in any layout
    return;
  }
  diff_dst_.Point(Input(2).any_layout_data<float>());
  diff_src_.Point(dx);
  scratch_.Place();
  diff_dst_.Reorder();
  if (forward_) {
    Point(src_, Input(0).any_layout_data<float>());
    forward_.Run();
  }
  backward_.Run();
  diff_src_.Reorder();
}

namespace {

std::vector<ShapeInfo> InferPoolGradientShape(const OperatorDef& def,
                                              const std::vector<ShapeInfo>& in, PoolKind kind) {
  if (in.size() != 3) return {};  // reported by OpSchema::Verify
  return {{DType::kFloat32, ComputePoolGradientShapes(def, in, kind).x_dims, true}};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(MaxPoolGradient)
    .ArgsOf("MaxPool")
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      return InferPoolGradientShape(def, in, PoolKind::kMax);
    })
    .BlockedPorts([](const OperatorDef&) { return DnnlLayoutPorts({0, 1, 2}, {0}); })
    .AllocatesLazily()  // plans, JIT code and buffers on the first run of a shape
    .SetDoc("Gradient of MaxPool: X, Y, dY -> dX (to each window's first maximum).");

BRAID_OPERATOR_SCHEMA(AveragePoolGradient)
    .ArgsOf("AveragePool")
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      return InferPoolGradientShape(def, in, PoolKind::kAverage);
    })
    .BlockedPorts([](const OperatorDef&) { return DnnlLayoutPorts({0, 1, 2}, {0}); })
    .AllocatesLazily()  // plans, JIT code and buffers on the first run of a shape
    .SetDoc("Gradient of AveragePool: X, Y, dY -> dX (same count_include_pad rule).");

BRAID_REGISTER_CPU_OPERATOR(MaxPoolGradient, MaxPoolGradientOp);
BRAID_REGISTER_CPU_OPERATOR(AveragePoolGradient, AveragePoolGradientOp);

}  // namespace braid
