#include "ops/nn/conv_gradient_op.h"

#include <algorithm>
#include <string>

#include "ops/common/op_checks.h"
#include "ops/nn/conv_algorithm.h"
#include "runtime/core/argument.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

using dnnl::convolution_backward_data;
using dnnl::convolution_backward_weights;

// The algorithms of each direction, as the AlgorithmRegistry chose them for every device.
struct ConvBackwardAlgorithms {
  dnnl::algorithm forward, weights, data;
};

ConvBackwardPlan MakeConvBackwardPlan(const ConvShapes& s, bool with_dx,
                                      const ConvBackwardAlgorithms& algorithms) {
  const dnnl::memory::dims weights = s.DnnlWeightDims();
  ConvBackwardPlan plan;
  try {
    const dnnl::convolution_forward::primitive_desc hint =
        MakeConvForwardDesc(s, algorithms.forward);
    const auto bw = MakeConvBackwardWeightsDesc(s, algorithms.weights, hint);
    plan.src = LayoutBridge(TensorDesc(s.x_dims, s.x_layout), bw.src_desc(), true);
    plan.diff_dst_for_weights =
        LayoutBridge(TensorDesc(s.y_dims, s.y_layout), bw.diff_dst_desc(), true);
    plan.diff_weights = LayoutBridge(PlainDesc(weights), bw.diff_weights_desc(), false);
    plan.diff_bias = s.has_bias ? PlainDesc({s.out_channels()}) : dnnl::memory::desc();
    plan.backward_weights = DnnlPrimitive::Of<convolution_backward_weights>(bw);
    if (!with_dx) return plan;
    const auto bd = MakeConvBackwardDataDesc(s, algorithms.data, hint);
    plan.weights = LayoutBridge(PlainDesc(weights), bd.weights_desc(), true);
    plan.diff_dst_for_data =
        LayoutBridge(TensorDesc(s.y_dims, s.y_layout), bd.diff_dst_desc(), true);
    plan.diff_src = LayoutBridge(TensorDesc(s.x_dims, s.dx_layout), bd.diff_src_desc(), false);
    plan.backward_data = DnnlPrimitive::Of<convolution_backward_data>(bd);
  } catch (const dnnl::error& e) {
    ThrowDnnlError(e, "a convolution gradient for X " + DimsText(s.x_dims) + " and filter " +
                          DimsText(s.filter_dims));
  }
  return plan;
}

}  // namespace

ConvGradientOutputs ConvGradientOutputsOf(const OperatorDef& def) {
  const bool no_bias = ArgumentReader(def.arg()).Get<bool>("no_bias", false);
  const int n = def.output_size();
  ConvGradientOutputs out;
  if (no_bias && (n == 1 || n == 2)) {
    out.dx = n == 2 ? 1 : -1;
  } else if (!no_bias && (n == 2 || n == 3)) {
    out.dbias = 1;
    out.dx = n == 3 ? 2 : -1;
  } else {
    ThrowInvalidArgument(std::string("ConvGradient with no_bias=") + (no_bias ? "1" : "0") +
                         " writes " + (no_bias ? "dfilter[, dX]" : "dfilter, dbias[, dX]") +
                         ", but names " + std::to_string(n) + " outputs");
  }
  return out;
}

ConvShapes ComputeConvGradientShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  ConvShapes s = ComputeConvShapes(def, {in[0], in[1]});
  s.has_bias = ConvGradientOutputsOf(def).dbias >= 0;
  if (in[2].dtype != DType::kFloat32 || in[2].dims != s.y_dims) {
    ThrowInvalidArgument("dY " + DescribeBlob(def.input(2), in[2]) + " must be float32" +
                         DimsText(s.y_dims) + ", the shape of Conv's output for X " +
                         DescribeBlob(def.input(0), in[0]) + " and filter " +
                         DescribeBlob(def.input(1), in[1]));
  }
  return s;
}

void ConvGradientOp::Prepare() {
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  outputs_ = ConvGradientOutputsOf(def());
  shapes_ = ComputeConvGradientShapes(def(), in);
  shapes_.x_layout = Input(0).layout();
  shapes_.y_layout = Input(2).layout();
  if (outputs_.dx >= 0) shapes_.dx_layout = RequestedLayout(def(), outputs_.dx);
  const ConvShapes& s = shapes_;
  const bool with_dx = outputs_.dx >= 0;
  const ConvBackwardAlgorithms algorithms{
      ChooseConvAlgorithm(s, ConvDirection::kForward, device()),
      ChooseConvAlgorithm(s, ConvDirection::kBackwardWeights, device()),
      with_dx ? ChooseConvAlgorithm(s, ConvDirection::kBackwardData, device())
              : dnnl::algorithm::convolution_direct};
  const std::string key = CacheKey("ConvGradient")
                              .Add(s.x_dims)
                              .Add(s.filter_dims)
                              .Add(s.group)
                              .Add(s.has_bias)
                              .Add(with_dx)
                              .Add(s.window.Strides())
                              .Add(s.window.DnnlDilation())
                              .Add(s.window.PadBegin())
                              .Add(s.window.PadEnd())
                              .Add(s.x_layout)
                              .Add(s.y_layout)
                              .Add(s.dx_layout)
                              .Add(ConvAlgorithmName(algorithms.forward))
                              .Add(ConvAlgorithmName(algorithms.weights))
                              .Add(ConvAlgorithmName(algorithms.data))
                              .str();
  plan_ = PrimitiveCache::Global().GetOrCreate<ConvBackwardPlan>(
      key, [&s, with_dx, &algorithms] { return MakeConvBackwardPlan(s, with_dx, algorithms); });
  Bind(*plan_);
  prepared_dims_.clear();
  for (const ShapeInfo& info : in) prepared_dims_.push_back(info.dims);
}

void ConvGradientOp::Bind(const ConvBackwardPlan& plan) {
  scratch_ = ScratchLayout();
  diff_dst_ = BoundTensor(plan.diff_dst_for_weights, &scratch_);
  src_ = BoundTensor(plan.src, &scratch_);
  diff_weights_ = BoundTensor(plan.diff_weights, &scratch_);
  backward_weights_ = BoundPrimitive(plan.backward_weights, &scratch_);
  backward_weights_.Bind(DNNL_ARG_SRC, src_.at_primitive());
  backward_weights_.Bind(DNNL_ARG_DIFF_DST, diff_dst_.at_primitive());
  backward_weights_.Bind(DNNL_ARG_DIFF_WEIGHTS, diff_weights_.at_primitive());
  if (outputs_.dbias >= 0) {
    diff_bias_ = MemoryOf(plan.diff_bias);
    backward_weights_.Bind(DNNL_ARG_DIFF_BIAS, diff_bias_);
  }
  if (outputs_.dx < 0) return;
  weights_ = BoundTensor(plan.weights, &scratch_);
  diff_src_ = BoundTensor(plan.diff_src, &scratch_, src_);  // X's copy is dead after dW
  // Both primitives' scratchpads in one region: they run one after the other.
  backward_data_ = BoundPrimitive(plan.backward_data, &scratch_, backward_weights_);
  // dY is reordered once when both primitives want the same layout.
  diff_dst_layouts_agree_ = plan.diff_dst_for_data.wanted() == plan.diff_dst_for_weights.wanted();
  if (!diff_dst_layouts_agree_) {
    diff_dst_for_data_ = BoundTensor(plan.diff_dst_for_data, &scratch_);
  }
  backward_data_.Bind(DNNL_ARG_DIFF_DST, diff_dst_layouts_agree_
                                             ? diff_dst_.at_primitive()
                                             : diff_dst_for_data_.at_primitive());
  backward_data_.Bind(DNNL_ARG_WEIGHTS, weights_.at_primitive());
  backward_data_.Bind(DNNL_ARG_DIFF_SRC, diff_src_.at_primitive());
}

void ConvGradientOp::Run() {
  bool same = plan_ != nullptr && Input(0).layout() == shapes_.x_layout &&
              Input(2).layout() == shapes_.y_layout;
  for (int i = 0; i < 3; ++i) {
    CheckInputType(*this, i, {DType::kFloat32});
    same = same && Input(i).shape() == prepared_dims_[i];
  }
  if (!same) Prepare();
  const ConvShapes& s = shapes_;
  float* dw = Output(outputs_.dfilter, DType::kFloat32, s.filter_dims)->mutable_data<float>();
  float* db = nullptr;
  if (outputs_.dbias >= 0) {
    db = Output(outputs_.dbias, DType::kFloat32, {s.out_channels()})->mutable_data<float>();
  }
  float* dx = nullptr;
  if (outputs_.dx >= 0) {
    dx = Output(outputs_.dx, DType::kFloat32, s.x_dims)->mutable_data<float>();
    Output(outputs_.dx)->set_layout(s.dx_layout);
  }
  if (Input(2).numel() == 0) {  // an empty batch: no contribution to dfilter and dbias
    std::fill_n(dw, Output(outputs_.dfilter)->numel(), 0.f);
    if (db != nullptr) std::fill_n(db, s.out_channels(), 0.f);
    return;
  }
  const float* dy = Input(2).any_layout_data<float>();
  src_.Point(Input(0).any_layout_data<float>());
  diff_dst_.Point(dy);
  diff_weights_.Point(dw);
  if (db != nullptr) Point(diff_bias_, db);
  scratch_.Place();
  src_.Reorder();
  diff_dst_.Reorder();
  backward_weights_.Run();
  diff_weights_.Reorder();
  if (dx == nullptr) return;
  weights_.Point(Input(1).data<float>());
  diff_src_.Point(dx);
  weights_.Reorder();
  if (!diff_dst_layouts_agree_) {
    diff_dst_for_data_.Point(dy);
    diff_dst_for_data_.Reorder();
  }
  backward_data_.Run();
  diff_src_.Reorder();
}

BRAID_OPERATOR_SCHEMA(ConvGradient)
    .ArgsOf("Conv")
    .Arg("no_bias", ArgKind::kInt)
    .NumInputs(3)
    .NumOutputs(1, 3)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 3) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const ConvShapes s = ComputeConvGradientShapes(def, in);
      const ConvGradientOutputs o = ConvGradientOutputsOf(def);
      std::vector<ShapeInfo> out(def.output_size());
      out[o.dfilter] = {DType::kFloat32, s.filter_dims, true};
      if (o.dbias >= 0) out[o.dbias] = {DType::kFloat32, {s.out_channels()}, true};
      if (o.dx >= 0) out[o.dx] = {DType::kFloat32, s.x_dims, true};
      return out;
    })
    .BlockedPorts([](const OperatorDef& def) {
      OpSchema::LayoutPorts ports = DnnlLayoutPorts({0, 2}, {});
      const int dx = def.output_size() - 1;  // dX is last when named (ConvGradientOutputsOf)
      const bool no_bias = ArgumentReader(def.arg()).Get<bool>("no_bias", false);
      if (dx == (no_bias ? 1 : 2)) ports.outputs.push_back(dx);
      return ports;
    })
    .AllocatesLazily()  // plans, JIT code and buffers on the first run of a shape
    .SetDoc(
        "Gradient of Conv: X, filter, dY -> dfilter, dbias (unless no_bias=1), dX (when "
        "named). Conv's window arguments.");

BRAID_REGISTER_CPU_OPERATOR(ConvGradient, ConvGradientOp);

}  // namespace braid
