#include "ops/nn/conv_op.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "ops/common/op_checks.h"
#include "ops/nn/conv_algorithm.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

void CheckChannels(const OperatorDef& def, const std::vector<ShapeInfo>& in, int64_t group) {
  const ShapeInfo& x = in[0];
  const ShapeInfo& w = in[1];
  const int64_t c = x.dims[1];
  const int64_t m = w.dims[0];
  if (group < 1 || c % group != 0 || m % group != 0) {
    ThrowInvalidArgument("group " + std::to_string(group) +
                         " must divide the channels C=" + std::to_string(c) + " of X " +
                         DescribeBlob(def.input(0), x) + " and the filters M=" + std::to_string(m) +
                         " of " + DescribeBlob(def.input(1), w));
  }
  if (w.dims[1] != c / group) {
    ThrowInvalidArgument("filter " + DescribeBlob(def.input(1), w) + " must have C/group=" +
                         std::to_string(c / group) + " input channels (dim 1) for X " +
                         DescribeBlob(def.input(0), x) + " and group " + std::to_string(group));
  }
  if (in.size() > 2 && (in[2].dtype != DType::kFloat32 || in[2].dims != std::vector<int64_t>{m})) {
    ThrowInvalidArgument("bias " + DescribeBlob(def.input(2), in[2]) + " must be float32[" +
                         std::to_string(m) + "], one value per filter of " +
                         DescribeBlob(def.input(1), w));
  }
}

ConvForwardPlan MakeConvForwardPlan(const ConvShapes& s, dnnl::algorithm algorithm) {
  ConvForwardPlan plan;
  try {
    const dnnl::convolution_forward::primitive_desc pd = MakeConvForwardDesc(s, algorithm);
    plan.src = LayoutBridge(TensorDesc(s.x_dims, s.x_layout), pd.src_desc(), true);
    plan.weights = LayoutBridge(s.FilterDesc(), pd.weights_desc(), true);
    plan.dst = LayoutBridge(TensorDesc(s.y_dims, s.y_layout), pd.dst_desc(), false);
    if (s.has_summand) {
      plan.summand = LayoutBridge(TensorDesc(s.y_dims, s.s_layout), pd.dst_desc(), true);
    }
    if (s.has_bias) plan.bias = pd.bias_desc();
    plan.conv = DnnlPrimitive::Of<dnnl::convolution_forward>(pd);
  } catch (const dnnl::error& e) {
    ThrowDnnlError(e, "a convolution for X " + DimsText(s.x_dims) + " and filter " +
                          DimsText(s.filter_dims));
  }
  return plan;
}

}  // namespace

bool PackConvFilter(const OperatorDef& op, Tensor* filter) {
  const std::vector<int64_t>& dims = filter->shape();
  if (ArgumentReader(op.arg()).Get<int64_t>("group", 1) != 1 || !filter->device().is_host() ||
      filter->layout() != Layout::kPlain || !PackableFilterShape(filter->dtype(), dims, 8)) {
    return false;
  }
  const dnnl::memory::desc plain = PlainDesc(ToDnnlDims(dims));
  Layout layout = Layout::kPlain;
  try {
    // What the direct convolution reads on this CPU: OIhw16i16o on AVX-512, OIhw8i8o on AVX2.
    const dnnl::memory::desc wanted = DirectConvolutionProbe(dims).weights_desc();
    for (const int64_t block : {16, 8}) {
      if (PackableFilterShape(filter->dtype(), dims, block) &&
          wanted == TensorDesc(dims, FilterBlockedLayout(block)) &&
          wanted.get_size() == plain.get_size()) {
        layout = FilterBlockedLayout(block);
      }
    }
    if (layout == Layout::kPlain) return false;
    const dnnl::memory::desc packed = TensorDesc(dims, layout);
    const MappedBuffer values(plain.get_size());
    std::memcpy(values.data(), filter->data<float>(), plain.get_size());
    dnnl::memory from(plain, Engine(), values.data());
    dnnl::memory to(packed, Engine(), filter->mutable_data<float>());
    dnnl::reorder(from, to).execute(ThreadStream(), from, to);
    ThreadStream().wait();
  } catch (const dnnl::error& e) {
    ThrowDnnlError(e, "packing filter '" + op.input(1) + "' " + filter->ShapeString() +
                          " of Conv '" + op.name() + "'");
  }
  filter->set_layout(layout);
  return true;
}

dnnl::memory::desc ConvShapes::FilterDesc() const {
  if (w_layout == Layout::kPlain) return PlainDesc(DnnlWeightDims());
  return TensorDesc(filter_dims, w_layout);
}

dnnl::memory::dims ConvShapes::DnnlWeightDims() const {
  if (group == 1) return ToDnnlDims(filter_dims);
  return {group, filter_dims[0] / group, filter_dims[1], filter_dims[2], filter_dims[3]};
}

ConvShapes ComputeConvShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  CheckNchwInput(def, in, 0, "X");
  CheckNchwInput(def, in, 1, "filter");
  ConvShapes s;
  s.has_summand = HasFusedSum(def);
  const size_t operands = in.size() - (s.has_summand ? 1 : 0);  // X, the filter, the bias
  if (operands < 2 || operands > 3) {
    ThrowInvalidArgument(std::string("takes X, a filter and an optional bias") +
                         (s.has_summand ? ", then the summand (fused_sum), " : ", ") + "not " +
                         std::to_string(in.size()) + " inputs");
  }
  s.group = ArgumentReader(def.arg()).Get<int64_t>("group", 1);
  CheckChannels(def, {in.begin(), in.begin() + operands}, s.group);
  s.window = ComputeConvPoolWindow(def, in[0], WindowKind::kConv,
                                   ConvPoolWindow::Pair{in[1].dims[2], in[1].dims[3]});
  s.has_bias = operands > 2;
  s.activation = FusedActivationOf(def);
  s.x_dims = in[0].dims;
  s.filter_dims = in[1].dims;
  s.y_dims = {in[0].dims[0], in[1].dims[0], s.window.output[0], s.window.output[1]};
  if (s.has_summand) {
    const ShapeInfo& summand = in.back();
    const std::string& name = def.input(def.input_size() - 1);
    if (summand.dtype != DType::kFloat32 || summand.dims != s.y_dims) {
      ThrowInvalidArgument("summand " + DescribeBlob(name, summand) + " (fused_sum) must be float32" +
                           DimsText(s.y_dims) + ", the shape of Y");
    }
  }
  return s;
}

bool WinogradEligible(const ConvShapes& s) {
  const ConvPoolWindow& w = s.window;
  const ConvPoolWindow::Pair one{1, 1}, three{3, 3};
  const int64_t c = s.x_dims[1], m = s.out_channels();
  return s.group == 1 && w.kernel == three && w.stride == one && w.dilation == one && c >= 16 &&
         m >= 16 && c * m <= kMaxWinogradChannelProduct;
}

void ConvOp::Prepare() {
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  shapes_ = ComputeConvShapes(def(), in);
  shapes_.x_layout = Input(0).layout();
  shapes_.w_layout = Input(1).layout();
  if (shapes_.w_layout != Layout::kPlain && shapes_.group != 1) {
    ThrowInvalidArgument("filter '" + def().input(1) + "' is " + LayoutName(shapes_.w_layout) +
                         ", which a grouped convolution (group " + std::to_string(shapes_.group) +
                         ") cannot read");
  }
  shapes_.y_layout = RequestedLayout(def(), 0);
  if (shapes_.has_summand) shapes_.s_layout = Input(InputSize() - 1).layout();
  // From the chunk whose blocked X and Y fit the budget, down while the largest candidate's
  // scratchpad (Winograd's grows with the chunk) takes them over it, so that the algorithm search
  // allocates no more than the op may hold; then down while the chosen primitive's layouts do.
  const int64_t n = shapes_.x_dims[0];
  const int64_t operand_bytes = BlockedBytesPerSample(shapes_.x_dims) +
                                BlockedBytesPerSample(shapes_.y_dims) *
                                    (shapes_.has_summand ? 2 : 1);  // S's copy, where reordered
  chunk_ = BatchChunk(n, operand_bytes);
  while (chunk_ > 1) {
    ConvShapes at_chunk = shapes_;
    at_chunk.x_dims[0] = at_chunk.y_dims[0] = chunk_;
    const int64_t bytes = chunk_ * operand_bytes + LargestForwardScratchpadBytes(at_chunk);
    if (bytes <= kChunkScratchBytes) break;
    chunk_ = BatchChunk(n, (bytes + chunk_ - 1) / chunk_);
  }
  // On the host, a search times on X and on Y's memory (which this run overwrites anyway), so it
  // allocates no activations of its own beside the net's.
  ConvSearchMemory search;
  if (device().is_host()) {
    Tensor* y = Output(0, DType::kFloat32, shapes_.y_dims);
    search = {Input(0).any_layout_data<float>(), Input(0).nbytes(), y->mutable_data<float>(),
              y->nbytes(), Input(1).any_layout_data<float>(), Input(1).nbytes()};
    if (shapes_.has_summand) {
      const Tensor& summand = Input(InputSize() - 1);
      search.summand = summand.any_layout_data<float>();
      search.summand_bytes = summand.nbytes();
    }
  }
  Bind(chunk_, search);
  while (chunk_ > 1 && scratch_.bytes() > static_cast<size_t>(kChunkScratchBytes)) {
    chunk_ = BatchChunk(n, (static_cast<int64_t>(scratch_.bytes()) + chunk_ - 1) / chunk_);
    Bind(chunk_, search);
  }
  prepared_dims_.clear();
  for (const ShapeInfo& info : in) prepared_dims_.push_back(info.dims);
}

void ConvOp::Bind(int64_t chunk, const ConvSearchMemory& search) {
  ConvShapes s = shapes_;
  s.x_dims[0] = s.y_dims[0] = std::max<int64_t>(chunk, 1);
  const dnnl::algorithm algorithm =
      ChooseConvAlgorithm(s, ConvDirection::kForward, device(), search);
  const std::string key = CacheKey("Conv")
                              .Add(s.x_dims)
                              .Add(s.filter_dims)
                              .Add(s.group)
                              .Add(s.has_bias)
                              .Add(s.has_summand)
                              .Add(static_cast<int64_t>(s.activation.kind))
                              .AddFloat(s.activation.min)
                              .AddFloat(s.activation.max)
                              .Add(s.window.Strides())
                              .Add(s.window.DnnlDilation())
                              .Add(s.window.PadBegin())
                              .Add(s.window.PadEnd())
                              .Add(s.x_layout)
                              .Add(s.w_layout)
                              .Add(s.y_layout)
                              .Add(s.s_layout)
                              .Add(ConvAlgorithmName(algorithm))
                              .str();
  plan_ = PrimitiveCache::Global().GetOrCreate<ConvForwardPlan>(
      key, [&s, algorithm] { return MakeConvForwardPlan(s, algorithm); });
  scratch_ = ScratchLayout();
  src_ = BoundTensor(plan_->src, &scratch_);
  dst_ = BoundTensor(plan_->dst, &scratch_);
  weights_ = BoundTensor(plan_->weights, &scratch_);
  conv_ = BoundPrimitive(plan_->conv, &scratch_);
  conv_.Bind(DNNL_ARG_SRC, src_.at_primitive());
  conv_.Bind(DNNL_ARG_WEIGHTS, weights_.at_primitive());
  conv_.Bind(DNNL_ARG_DST, dst_.at_primitive());
  if (s.has_bias) {
    bias_ = MemoryOf(plan_->bias);
    conv_.Bind(DNNL_ARG_BIAS, bias_);
  }
  if (s.has_summand) {
    summand_ = BoundTensor(plan_->summand, &scratch_);
    conv_.Bind(kSummandArg, summand_.at_primitive());
  }
}

void ConvOp::Run() {
  const int last = InputSize() - 1;
  bool same = plan_ != nullptr && static_cast<int>(prepared_dims_.size()) == InputSize() &&
              Input(0).layout() == shapes_.x_layout && Input(1).layout() == shapes_.w_layout &&
              (!shapes_.has_summand || Input(last).layout() == shapes_.s_layout);
  for (int i = 0; i < InputSize(); ++i) {
    CheckInputType(*this, i, {DType::kFloat32});
    same = same && Input(i).shape() == prepared_dims_[i];
  }
  if (!same) Prepare();
  float* y = Output(0, DType::kFloat32, shapes_.y_dims)->mutable_data<float>();
  Output(0)->set_layout(shapes_.y_layout);
  if (Output(0)->numel() == 0) return;
  scratch_.Place();
  const float* x = Input(0).any_layout_data<float>();
  weights_.Point(Input(1).any_layout_data<float>());
  if (shapes_.has_bias) Point(bias_, Input(2).data<float>());
  weights_.Reorder();
  const float* summand = shapes_.has_summand ? Input(last).any_layout_data<float>() : nullptr;
  const int64_t x_chunk = Input(0).numel() / shapes_.x_dims[0] * chunk_;
  const int64_t y_chunk = Output(0)->numel() / shapes_.y_dims[0] * chunk_;
  const int64_t s_chunk = summand ? Input(last).numel() / shapes_.y_dims[0] * chunk_ : 0;
  for (int64_t n = 0; n < shapes_.x_dims[0];
       n += chunk_, x += x_chunk, y += y_chunk, summand += s_chunk) {
    src_.Point(x);
    dst_.Point(y);
    src_.Reorder();
    if (shapes_.has_summand) {
      summand_.Point(summand);
      summand_.Reorder();
    }
    conv_.Run();
    dst_.Reorder();
  }
}

namespace {

GradientOps ConvGradientOps(const GradientRequest& r) {
  if (HasFusedEpilogue(r.op)) {
    throw Error(Status::InvalidArgument(
        "Conv '" + r.op.name() + "' has " + kFusedSumArg + " or " + kFusedActivationArg +
        " (inference fusions), which have no gradient: train the net with the Sum and activation "
        "ops after it"));
  }
  const bool has_bias = r.op.input_size() == 3;
  std::vector<std::string> outputs{r.input_grads[1]};
  if (has_bias) outputs.push_back(r.input_grads[2]);
  outputs.push_back(r.input_grads[0]);
  OperatorDef grad = MakeGradientOp(r.op, "ConvGradient",
                                    {r.op.input(0), r.op.input(1), r.output_grads[0]}, outputs);
  auto* args = grad.mutable_arg();
  args->erase(std::remove_if(args->begin(), args->end(),
                             [](const Argument& a) { return a.name() == "no_bias"; }),
              args->end());
  if (!has_bias) {
    Argument* no_bias = grad.add_arg();
    no_bias->set_name("no_bias");
    no_bias->set_i(1);
  }
  return {{grad}, std::vector<bool>(r.op.input_size(), true)};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(Conv)
    .Args(ConvPoolWindowArgs(WindowKind::kConv))
    .Arg("group", ArgKind::kInt)
    .Arg(kFusedActivationArg, ArgKind::kString)
    .Arg(kFusedMinArg, ArgKind::kFloat)
    .Arg(kFusedMaxArg, ArgKind::kFloat)
    .Arg(kFusedSumArg, ArgKind::kInt)
    .NumInputs(2, 4)
    .NumOutputs(1)
    .PackedInput(1, PackConvFilter)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() < 2) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{{DType::kFloat32, ComputeConvShapes(def, in).y_dims, true}};
    })
    .BlockedPorts([](const OperatorDef& op) {
      if (HasFusedSum(op)) return DnnlLayoutPorts({0, op.input_size() - 1}, {0});
      return DnnlLayoutPorts({0}, {0});
    })
    .AllocatesLazily()  // plans, JIT code and buffers on the first run of a shape
    .SetDoc(
        "2-D convolution, NCHW: X [N,C,H,W], filter [M,C/group,kH,kW], optional bias [M] -> "
        "Y [N,M,outH,outW]. Args: kernel, stride, pad, dilation (Caffe2 spellings), legacy_pad, "
        "group, order=NCHW; braid's inference fusions: fused_sum=1 adds a last input S of Y's "
        "shape, then fused_activation Relu or Clip with fused_min/fused_max.");

BRAID_REGISTER_CPU_OPERATOR(Conv, ConvOp);
BRAID_REGISTER_GRADIENT(Conv, ConvGradientOps);

}  // namespace braid
