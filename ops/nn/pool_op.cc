#include "ops/nn/pool_op.h"

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {

std::string PoolShapes::Key(const std::string& kind) const {
  return CacheKey(kind)
      .Add(static_cast<int64_t>(algorithm))
      .Add(x_dims)
      .Add(window.Kernel())
      .Add(window.Strides())
      .Add(window.PadBegin())
      .Add(window.PadEnd())
      .Add(x_layout)
      .Add(y_layout)
      .Add(dx_layout)
      .str();
}

PoolShapes ComputePoolShapes(const OperatorDef& def, const ShapeInfo& x, PoolKind kind) {
  CheckNchwInput(def, {x}, 0, "X");
  PoolShapes s;
  s.window = ComputeConvPoolWindow(def, x, WindowKind::kPool);
  if (kind == PoolKind::kAverage) {
    s.algorithm = ArgumentReader(def.arg()).Get<bool>("count_include_pad", false)
                      ? dnnl::algorithm::pooling_avg_include_padding
                      : dnnl::algorithm::pooling_avg_exclude_padding;
  }
  s.x_dims = x.dims;
  s.y_dims = {x.dims[0], x.dims[1], s.window.output[0], s.window.output[1]};
  return s;
}

dnnl::pooling_forward::primitive_desc MakePoolForwardDesc(const PoolShapes& s,
                                                          dnnl::prop_kind prop_kind) {
  const ConvPoolWindow& w = s.window;
  const dnnl::pooling_forward::desc desc(prop_kind, s.algorithm, TensorDesc(s.x_dims, s.x_layout),
                                         TensorDesc(s.y_dims, s.x_layout), w.Strides(), w.Kernel(),
                                         w.PadBegin(), w.PadEnd());
  return dnnl::pooling_forward::primitive_desc(desc, UserScratchpadAttr(), Engine());
}

void PoolOp::Prepare() {
  const Tensor& x = Input(0);
  shapes_ = ComputePoolShapes(def(), ShapeOf(x), kind_);
  shapes_.x_layout = x.layout();
  shapes_.y_layout = RequestedLayout(def(), 0);
  const PoolShapes& s = shapes_;
  plan_ = PrimitiveCache::Global().GetOrCreate<Plan>(s.Key(type()), [&s] {
    Plan plan;
    try {
      const auto pd = MakePoolForwardDesc(s, dnnl::prop_kind::forward_inference);
      plan.pool = DnnlPrimitive::Of<dnnl::pooling_forward>(pd);
      plan.src = pd.src_desc();
      plan.dst = LayoutBridge(TensorDesc(s.y_dims, s.y_layout), pd.dst_desc(), false);
    } catch (const dnnl::error& e) {
      ThrowDnnlError(e, "a pooling for X " + DimsText(s.x_dims));
    }
    return plan;
  });
  src_ = MemoryOf(plan_->src);
  scratch_ = ScratchLayout();
  dst_ = BoundTensor(plan_->dst, &scratch_);
  pool_ = BoundPrimitive(plan_->pool, &scratch_);
  pool_.Bind(DNNL_ARG_SRC, src_);
  pool_.Bind(DNNL_ARG_DST, dst_.at_primitive());
  prepared_dims_ = x.shape();
}

void PoolOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  if (plan_ == nullptr || Input(0).shape() != prepared_dims_ ||
      Input(0).layout() != shapes_.x_layout) {
    Prepare();
  }
  float* y = Output(0, DType::kFloat32, shapes_.y_dims)->mutable_data<float>();
  Output(0)->set_layout(shapes_.y_layout);
  if (Output(0)->numel() == 0) return;
  Point(src_, Input(0).any_layout_data<float>());
  dst_.Point(y);
  scratch_.Place();
  pool_.Run();
  dst_.Reorder();
}

namespace {

std::vector<ShapeInfo> InferPoolShape(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                      PoolKind kind) {
  if (in.size() != 1) return {};  // reported by OpSchema::Verify
  return {{DType::kFloat32, ComputePoolShapes(def, in[0], kind).y_dims, true}};
}

GradientOps PoolGradientOps(const GradientRequest& r) {
  return {{MakeGradientOp(r.op, r.op.type() + "Gradient",
                          {r.op.input(0), r.op.output(0), r.output_grads[0]}, {r.input_grads[0]})},
          {true}};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(MaxPool)
    .Args(ConvPoolWindowArgs(WindowKind::kPool))
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      return InferPoolShape(def, in, PoolKind::kMax);
    })
    .BlockedPorts([](const OperatorDef&) { return DnnlLayoutPorts({0}, {0}); })
    .AllocatesLazily()  // plans, JIT code and buffers on the first run of a shape
    .SetDoc(
        "2-D max pooling, NCHW: X [N,C,H,W] -> Y [N,C,outH,outW]. Args: kernel, stride, pad "
        "(Caffe2 spellings), legacy_pad, global_pooling, order=NCHW.");

BRAID_OPERATOR_SCHEMA(AveragePool)
    .Args(ConvPoolWindowArgs(WindowKind::kPool))
    .Arg("count_include_pad", ArgKind::kInt)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      return InferPoolShape(def, in, PoolKind::kAverage);
    })
    .BlockedPorts([](const OperatorDef&) { return DnnlLayoutPorts({0}, {0}); })
    .AllocatesLazily()  // plans, JIT code and buffers on the first run of a shape
    .SetDoc(
        "2-D average pooling, NCHW: X [N,C,H,W] -> Y [N,C,outH,outW]. Args: kernel, stride, pad "
        "(Caffe2 spellings), legacy_pad, global_pooling, order=NCHW, count_include_pad (default 0: divide by "
        "the window elements inside the image).");

BRAID_REGISTER_CPU_OPERATOR(MaxPool, MaxPoolOp);
BRAID_REGISTER_CPU_OPERATOR(AveragePool, AveragePoolOp);
BRAID_REGISTER_GRADIENT(MaxPool, PoolGradientOps);
BRAID_REGISTER_GRADIENT(AveragePool, PoolGradientOps);

}  // namespace braid
