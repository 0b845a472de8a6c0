#include "ops/nn/conv_transpose_op.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "ops/common/op_checks.h"
#include "ops/nn/im2col.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/exec/scratch.h"

namespace braid {
namespace {

using Pair = ConvPoolWindow::Pair;

std::string PairString(const Pair& p) {
  return "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")";
}

// adj | adj_h, adj_w | adjs.
Pair ReadAdj(const ArgumentReader& args) {
  const int spellings =
      args.Has("adj") + (args.Has("adj_h") || args.Has("adj_w")) + args.Has("adjs");
  if (spellings > 1) ThrowInvalidArgument("set only one of 'adj', 'adj_h'/'adj_w' and 'adjs'");
  if (args.Has("adj")) return {args.Get<int64_t>("adj", 0), args.Get<int64_t>("adj", 0)};
  if (args.Has("adjs")) {
    const std::vector<int64_t> v = args.GetList<int64_t>("adjs");
    if (v.size() != 2) {
      ThrowInvalidArgument("argument 'adjs' " + DimsText(v) +
                           " must hold 2 values (height, width)");
    }
    return {v[0], v[1]};
  }
  return {args.Get<int64_t>("adj_h", 0), args.Get<int64_t>("adj_w", 0)};
}

void CheckChannels(const OperatorDef& def, const std::vector<ShapeInfo>& in, int64_t group) {
  const ShapeInfo& x = in[0];
  const ShapeInfo& w = in[1];
  if (w.dims[0] != x.dims[1]) {
    ThrowInvalidArgument("filter " + DescribeBlob(def.input(1), w) +
                         " must have C=" + std::to_string(x.dims[1]) +
                         " rows (dim 0), the channels of X " + DescribeBlob(def.input(0), x));
  }
  if (group < 1 || x.dims[1] % group != 0) {
    ThrowInvalidArgument("group " + std::to_string(group) + " must divide the channels C=" +
                         std::to_string(x.dims[1]) + " of X " + DescribeBlob(def.input(0), x));
  }
  const int64_t m = w.dims[1] * group;
  if (in.size() > 2 && (in[2].dtype != DType::kFloat32 || in[2].dims != std::vector<int64_t>{m})) {
    ThrowInvalidArgument("bias " + DescribeBlob(def.input(2), in[2]) + " must be float32[" +
                         std::to_string(m) + "], one value per output channel (filter dim 1 " +
                         "times group " + std::to_string(group) + ")");
  }
}

// The window arguments, read and checked by ComputeConvPoolWindow over X with spatial dims that
// every window fits (only the arguments are used: ConvTranspose's output size is computed here).
ConvPoolWindow ReadWindow(const OperatorDef& def, const ShapeInfo& x, const ShapeInfo& filter) {
  const ArgumentReader args(def.arg());
  if (args.Get<int64_t>("legacy_pad", 0) != 0) {
    ThrowInvalidArgument("ConvTranspose: legacy_pad " +
                         std::to_string(args.Get<int64_t>("legacy_pad", 0)) +
                         " is not supported: give explicit pads");
  }
  ShapeInfo probe = x;
  probe.dims[2] = probe.dims[3] = std::numeric_limits<int32_t>::max();
  ConvPoolWindow w =
      ComputeConvPoolWindow(def, probe, WindowKind::kConv, Pair{filter.dims[2], filter.dims[3]});
  if (w.dilation != Pair{1, 1}) {
    ThrowInvalidArgument("ConvTranspose takes no dilation, got " + PairString(w.dilation));
  }
  return w;
}

}  // namespace

ConvTransposeShapes ComputeConvTransposeShapes(const OperatorDef& def,
                                               const std::vector<ShapeInfo>& in) {
  CheckNchwInput(def, in, 0, "X");
  CheckNchwInput(def, in, 1, "filter");
  ConvTransposeShapes s;
  s.group = ArgumentReader(def.arg()).Get<int64_t>("group", 1);
  CheckChannels(def, in, s.group);
  s.window = ReadWindow(def, in[0], in[1]);
  s.adj = ReadAdj(ArgumentReader(def.arg()));
  s.has_bias = in.size() > 2;
  s.x_dims = in[0].dims;
  s.filter_dims = in[1].dims;
  s.y_dims = {in[0].dims[0], in[1].dims[1] * s.group, 0, 0};
  const ConvPoolWindow& w = s.window;
  for (int d = 0; d < 2; ++d) {
    if (s.adj[d] < 0 || s.adj[d] >= w.stride[d]) {
      ThrowInvalidArgument("adj " + PairString(s.adj) + " must be >= 0 and below the stride " +
                           PairString(w.stride));
    }
    const int64_t in_size = s.x_dims[2 + d];
    s.y_dims[2 + d] =
        (in_size - 1) * w.stride[d] + w.kernel[d] + s.adj[d] - w.pad_begin[d] - w.pad_end[d];
    if (in_size < 1 || s.y_dims[2 + d] < 1) {
      ThrowInvalidArgument("X " + DescribeBlob(def.input(0), in[0]) + " with kernel " +
                           PairString(w.kernel) + ", stride " + PairString(w.stride) + ", adj " +
                           PairString(s.adj) + " and pads " + PairString(w.pad_begin) + ", " +
                           PairString(w.pad_end) + " gives an empty output");
    }
  }
  s.window.output = {s.x_dims[2], s.x_dims[3]};
  return s;
}

void CheckConvTransposeBlasSizes(const OperatorDef& def, const ConvTransposeShapes& s) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (s.col_rows() > kMax || s.x_plane() > kMax || s.in_channels_per_group() > kMax) {
    ThrowInvalidArgument("ConvTranspose '" + def.output(0) +
                         "' is too large for BLAS: " + std::to_string(s.col_rows()) +
                         " column rows, " + std::to_string(s.x_plane()) + " pixels per plane of X");
  }
}

void ConvTransposeOp::Run() {
  for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
  const ConvTransposeShapes s = ComputeConvTransposeShapes(def(), InputShapeInfos(*this));
  CheckConvTransposeBlasSizes(def(), s);
  Tensor* out = Output(0, DType::kFloat32, s.y_dims);
  float* y = out->mutable_data<float>();
  std::fill_n(y, out->numel(), 0.f);
  if (out->numel() == 0) return;
  const float* x = Input(0).data<float>();
  const float* filter = Input(1).data<float>();
  const int64_t cin = s.in_channels_per_group(), cout = s.out_channels_per_group();
  const int64_t rows = s.col_rows(), hw = s.x_plane();
  float* col = static_cast<float*>(ThreadScratch().Reserve(rows * hw * sizeof(float)));
  for (int64_t n = 0; n < s.x_dims[0]; ++n) {
    for (int64_t g = 0; g < s.group; ++g) {
      const float* x_g = x + (n * s.group + g) * cin * hw;
      float* y_g = y + (n * s.group + g) * cout * s.y_plane();
      // cols [rows, hw] = W_g^T [rows, cin] X_g [cin, hw]
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(rows),
                  static_cast<int>(hw), static_cast<int>(cin), 1.f, filter + g * cin * rows,
                  static_cast<int>(rows), x_g, static_cast<int>(hw), 0.f, col,
                  static_cast<int>(hw));
      Col2Im(col, cout, s.y_size(), s.window, s.window.output, y_g);
    }
  }
  if (!s.has_bias) return;
  const float* bias = Input(2).data<float>();
  const int64_t m = s.y_dims[1], plane = s.y_plane();
  for (int64_t n = 0; n < s.y_dims[0]; ++n) {
    for (int64_t c = 0; c < m; ++c) {
      float* p = y + (n * m + c) * plane;
      for (int64_t i = 0; i < plane; ++i) p[i] += bias[c];
    }
  }
}

namespace {

// Caffe2's outputs: dfilter, dbias (unless no_bias), dX.
GradientOps ConvTransposeGradientOps(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, std::vector<bool>(r.op.input_size(), false)};
  const bool has_bias = r.op.input_size() == 3;
  std::vector<std::string> outputs{r.input_grads[1]};
  if (has_bias) outputs.push_back(r.input_grads[2]);
  outputs.push_back(r.input_grads[0]);
  OperatorDef grad = MakeGradientOp(r.op, "ConvTransposeGradient",
                                    {r.op.input(0), r.op.input(1), r.output_grads[0]}, outputs);
  auto* args = grad.mutable_arg();
  args->erase(std::remove_if(args->begin(), args->end(),
                             [](const Argument& a) { return a.name() == "no_bias"; }),
              args->end());
  Argument* no_bias = grad.add_arg();
  no_bias->set_name("no_bias");
  no_bias->set_i(!has_bias);
  return {{grad}, std::vector<bool>(r.op.input_size(), true)};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(ConvTranspose)
    .Args(ConvPoolWindowArgs(WindowKind::kConv))
    .Arg("group", ArgKind::kInt)
    .Arg("adj", ArgKind::kInt)
    .Arg("adj_h", ArgKind::kInt)
    .Arg("adj_w", ArgKind::kInt)
    .Arg("adjs", ArgKind::kInts)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() < 2) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{
          {DType::kFloat32, ComputeConvTransposeShapes(def, in).y_dims, true}};
    })
    .SetDoc(
        "2-D transposed convolution, NCHW: X [N,C,H,W], filter [C,M/group,kH,kW], optional bias "
        "[M] -> Y [N,M,(H-1)*stride+kH+adj-pad_t-pad_b, ...]. Args: kernel, stride, pad, adj "
        "(Caffe2 spellings), group, order=NCHW.");

BRAID_REGISTER_CPU_OPERATOR(ConvTranspose, ConvTransposeOp);
BRAID_REGISTER_GRADIENT(ConvTranspose, ConvTransposeGradientOps);

}  // namespace braid
