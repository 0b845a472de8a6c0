#include "ops/nn/spatial_bn_op.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "braid/status.h"
#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

using dnnl::batch_normalization_forward;
using dnnl::normalization_flags;

bool IsTest(const OperatorDef& def) {
  return ArgumentReader(def.arg()).Get<bool>("is_test", false);
}

// Shapes of a SpatialBN op, after checking its output count against its mode.
SpatialBnShapes ComputeForwardShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  const bool is_test = IsTest(def);
  if (def.output_size() != (is_test ? 1 : 5)) {
    ThrowInvalidArgument(
        std::string("SpatialBN with is_test=") + (is_test ? "1" : "0") + " writes " +
        (is_test ? "Y only" : "Y, running_mean, running_var, saved_mean, saved_inv_var") +
        ", but names " + std::to_string(def.output_size()) + " outputs");
  }
  SpatialBnShapes s = ComputeSpatialBnShapes(def, in, 0, {1, 2, 3, 4});
  if (!is_test && s.x_dims[0] * s.spatial <= 1) {
    ThrowInvalidArgument("training SpatialBN needs more than one value per channel, X " +
                         DescribeBlob(def.input(0), in[0]) + " has " +
                         std::to_string(s.x_dims[0] * s.spatial));
  }
  return s;
}

}  // namespace

SpatialBnShapes ComputeSpatialBnShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                       int x, const std::vector<int>& channel_inputs) {
  if (in[x].dtype != DType::kFloat32 || in[x].dims.size() < 2) {
    ThrowInvalidArgument("X " + DescribeBlob(def.input(x), in[x]) +
                         " must be float32 with at least 2 dims (N, C, spatial...)");
  }
  const std::string order = ArgumentReader(def.arg()).Get<std::string>("order", "NCHW");
  if (order != "NCHW") {
    ThrowInvalidArgument("order '" + order + "' is not supported: nn ops take NCHW tensors only");
  }
  SpatialBnShapes s;
  s.x_dims = in[x].dims;
  s.channels = in[x].dims[1];
  s.spatial = SizeFromDim(in[x].dims, 2);
  for (int i : channel_inputs) {
    if (in[i].dtype != DType::kFloat32 || in[i].dims != std::vector<int64_t>{s.channels}) {
      ThrowInvalidArgument("input " + DescribeBlob(def.input(i), in[i]) + " must be float32[" +
                           std::to_string(s.channels) + "], one value per channel of X " +
                           DescribeBlob(def.input(x), in[x]));
    }
  }
  return s;
}

namespace {

batch_normalization_forward::primitive_desc MakeBnDesc(const dnnl::memory::desc& data,
                                                       float epsilon, bool is_test) {
  normalization_flags flags = normalization_flags::use_scale | normalization_flags::use_shift;
  if (is_test) flags = flags | normalization_flags::use_global_stats;
  const dnnl::prop_kind prop =
      is_test ? dnnl::prop_kind::forward_inference : dnnl::prop_kind::forward_training;
  return batch_normalization_forward::primitive_desc(
      batch_normalization_forward::desc(prop, data, epsilon, flags), UserScratchpadAttr(),
      Engine());
}

}  // namespace

batch_normalization_forward::primitive_desc MakeBnDesc(const SpatialBnShapes& s, float epsilon,
                                                       bool is_test) {
  const dnnl::memory::dims dims = s.DnnlDims();
  // The machine's block first (its JIT kernel reads the net's blocked tensors as they are).
  const std::vector<int64_t> dims4(dims.begin(), dims.end());
  const int64_t native = NativeChannelBlock() == 8 ? 8 : 16;
  for (const int64_t block : {native, native == 8 ? int64_t{16} : int64_t{8}}) {
    if (s.channels % block != 0) continue;
    const batch_normalization_forward::primitive_desc pd =
        MakeBnDesc(TensorDesc(dims4, BlockedLayout(block)), epsilon, is_test);
    if (std::string(pd.impl_info_str()).find("jit") != std::string::npos) return pd;
  }
  return MakeBnDesc(PlainDesc(dims), epsilon, is_test);
}

void SpatialBNOp::Prepare() {
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  shapes_ = ComputeForwardShapes(def(), in);
  is_test_ = IsTest(def());
  epsilon_ = args().Get<float>("epsilon", 1e-5f);
  momentum_ = args().Get<float>("momentum", 0.9f);
  // Inference normalizes each sample alone, so it may run in chunks; training needs the batch.
  const int64_t n = shapes_.x_dims[0];
  chunk_ = is_test_ ? BatchChunk(n, BlockedBytesPerSample(shapes_.x_dims)) : n;
  shapes_.x_layout = Input(0).layout();
  shapes_.y_layout = RequestedLayout(def(), 0);
  SpatialBnShapes s = shapes_;  // one chunk
  s.x_dims[0] = std::max<int64_t>(chunk_, 1);
  const std::string key = CacheKey("SpatialBN")
                              .Add(s.DnnlDims())
                              .Add(is_test_)
                              .AddFloat(epsilon_)
                              .Add(s.x_layout)
                              .Add(s.y_layout)
                              .str();
  const bool is_test = is_test_;
  const float epsilon = epsilon_;
  plan_ = PrimitiveCache::Global().GetOrCreate<Plan>(key, [&s, is_test, epsilon] {
    Plan plan;
    try {
      const batch_normalization_forward::primitive_desc pd = MakeBnDesc(s, epsilon, is_test);
      plan.src = LayoutBridge(s.Desc(s.x_layout), pd.src_desc(), true);
      plan.dst = LayoutBridge(s.Desc(s.y_layout), pd.dst_desc(), false);
      plan.bn = DnnlPrimitive::Of<batch_normalization_forward>(pd);
    } catch (const dnnl::error& e) {
      ThrowDnnlError(e, "a batch normalization for X " + DimsText(s.x_dims));
    }
    plan.channel = PlainDesc({s.channels});
    return plan;
  });
  Bind(*plan_);
  prepared_dims_ = in[0].dims;
}

void SpatialBNOp::Bind(const Plan& plan) {
  scratch_ = ScratchLayout();
  src_ = BoundTensor(plan.src, &scratch_);
  dst_ = BoundTensor(plan.dst, &scratch_, src_);  // in place on the blocked buffer
  scale_ = MemoryOf(plan.channel);
  shift_ = MemoryOf(plan.channel);
  mean_ = MemoryOf(plan.channel);
  // Training writes the batch variance here; inference reads running_var (pointed at per run).
  batch_variance_.resize(shapes_.channels);
  variance_ = MemoryOf(plan.channel, batch_variance_.data());
  bn_ = BoundPrimitive(plan.bn, &scratch_);
  const std::pair<int, const dnnl::memory*> args[] = {{DNNL_ARG_SRC, &src_.at_primitive()},
                                                      {DNNL_ARG_DST, &dst_.at_primitive()},
                                                      {DNNL_ARG_SCALE, &scale_},
                                                      {DNNL_ARG_SHIFT, &shift_},
                                                      {DNNL_ARG_MEAN, &mean_},
                                                      {DNNL_ARG_VARIANCE, &variance_}};
  for (const auto& [arg, memory] : args) bn_.Bind(arg, *memory);
}

void SpatialBNOp::Run() {
  for (int i = 0; i < 5; ++i) CheckInputType(*this, i, {DType::kFloat32});
  if (plan_ == nullptr || Input(0).shape() != prepared_dims_ ||
      Input(0).layout() != shapes_.x_layout) {
    Prepare();
  }
  const int64_t c = shapes_.channels;
  for (int i = 1; i < 5; ++i) {  // only X's shape selects the plan: check the [C] inputs too
    if (Input(i).ndim() != 1 || Input(i).dim(0) != c) {
      ComputeSpatialBnShapes(def(), InputShapeInfos(*this), 0, {1, 2, 3, 4});  // throws
    }
  }
  float* y = Output(0, DType::kFloat32, shapes_.x_dims)->mutable_data<float>();
  Output(0)->set_layout(shapes_.y_layout);
  const float* x = Input(0).any_layout_data<float>();  // Y may be X: as checked before the write
  Point(scale_, Input(1).data<float>());
  Point(shift_, Input(2).data<float>());
  scratch_.Place();
  if (is_test_) {
    Point(mean_, Input(3).data<float>());
    Point(variance_, Input(4).data<float>());
    const int64_t chunk = c * shapes_.spatial * chunk_;
    for (int64_t n = 0; n < shapes_.x_dims[0]; n += chunk_, x += chunk, y += chunk) {
      src_.Point(x);
      dst_.Point(y);
      RunBn();
    }
    return;
  }
  src_.Point(x);
  dst_.Point(y);
  Point(mean_, Output(3, DType::kFloat32, {c})->mutable_data<float>());
  RunBn();
  UpdateStatistics(batch_variance_.data());
}

void SpatialBNOp::RunBn() {
  src_.Reorder();  // X before Y: Y may be X
  bn_.Run();
  dst_.Reorder();
}

void SpatialBNOp::UpdateStatistics(const float* batch_var) {
  const int64_t c = shapes_.channels;
  const float* batch_mean = Output(3)->data<float>();
  float* running_mean = Output(1, DType::kFloat32, {c})->mutable_data<float>();  // = input 3
  float* running_var = Output(2, DType::kFloat32, {c})->mutable_data<float>();   // = input 4
  float* saved_inv_var = Output(4, DType::kFloat32, {c})->mutable_data<float>();
  const double m = static_cast<double>(shapes_.x_dims[0]) * shapes_.spatial;
  const float unbias = static_cast<float>(m / (m - 1));
  for (int64_t i = 0; i < c; ++i) {
    saved_inv_var[i] = 1.f / std::sqrt(batch_var[i] + epsilon_);
    running_mean[i] = momentum_ * running_mean[i] + (1.f - momentum_) * batch_mean[i];
    running_var[i] = momentum_ * running_var[i] + (1.f - momentum_) * unbias * batch_var[i];
  }
}

namespace {

GradientOps SpatialBNGradientOps(const GradientRequest& r) {
  if (IsTest(r.op)) {
    throw Error(Status::InvalidArgument(
        "SpatialBN '" + r.op.output(0) +
        "' has is_test=1: its gradient is defined in training mode (is_test=0) only"));
  }
  return {{MakeGradientOp(
              r.op, "SpatialBNGradient",
              {r.op.input(0), r.op.input(1), r.output_grads[0], r.op.output(3), r.op.output(4)},
              {r.input_grads[0], r.input_grads[1], r.input_grads[2]})},
          {true, true, true, false, false}};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(SpatialBN)
    .Arg("is_test", ArgKind::kInt)
    .Arg("epsilon", ArgKind::kFloat)
    .Arg("momentum", ArgKind::kFloat)
    .Arg("order", ArgKind::kString)
    .NumInputs(5)
    .NumOutputs(1, 5)
    .AllowInplace({{0, 0}})
    .EnforceInplace({{3, 1}, {4, 2}})
    .BlockedPorts([](const OperatorDef&) { return DnnlLayoutPorts({0}, {0}); })
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 5) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const SpatialBnShapes s = ComputeForwardShapes(def, in);
      std::vector<ShapeInfo> out(def.output_size(), {DType::kFloat32, {s.channels}, true});
      out[0].dims = s.x_dims;
      return out;
    })
    .AllocatesLazily()  // plans, JIT code and buffers on the first run of a shape
    .SetDoc(
        "Batch normalization over channel axis 1: X, scale, bias, running_mean, running_var -> "
        "Y (is_test=1) or Y, running_mean, running_var (in place), saved_mean, saved_inv_var "
        "(is_test=0). Args: epsilon (1e-5), momentum (0.9), is_test (0).");

BRAID_REGISTER_CPU_OPERATOR(SpatialBN, SpatialBNOp);
BRAID_REGISTER_GRADIENT(SpatialBN, SpatialBNGradientOps);

}  // namespace braid
