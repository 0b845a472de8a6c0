#include "ops/nn/conv_transpose_gradient_op.h"

#include <cblas.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/nn/conv_transpose_op.h"
#include "ops/nn/im2col.h"
#include "runtime/core/argument.h"
#include "runtime/core/op_registry.h"
#include "runtime/exec/scratch.h"

namespace braid {
namespace {

struct GradientOutputs {
  int dbias = -1, dx = -1;  // output indices, -1 when not written
};

GradientOutputs GradientOutputsOf(const OperatorDef& def) {
  const bool no_bias = ArgumentReader(def.arg()).Get<bool>("no_bias", false);
  const int n = def.output_size();
  GradientOutputs out;
  if (no_bias && (n == 1 || n == 2)) {
    out.dx = n == 2 ? 1 : -1;
  } else if (!no_bias && (n == 2 || n == 3)) {
    out.dbias = 1;
    out.dx = n == 3 ? 2 : -1;
  } else {
    ThrowInvalidArgument(std::string("ConvTransposeGradient with no_bias=") +
                         (no_bias ? "1" : "0") + " writes " +
                         (no_bias ? "dfilter[, dX]" : "dfilter, dbias[, dX]") + ", but names " +
                         std::to_string(n) + " outputs");
  }
  return out;
}

// Inputs X, filter, dY.
ConvTransposeShapes ComputeGradientShapes(const OperatorDef& def,
                                          const std::vector<ShapeInfo>& in) {
  const ConvTransposeShapes s = ComputeConvTransposeShapes(def, {in[0], in[1]});
  if (in[2].dtype != DType::kFloat32 || in[2].dims != s.y_dims) {
    ThrowInvalidArgument("dY " + DescribeBlob(def.input(2), in[2]) + " must be float32" +
                         DimsText(s.y_dims) + ", the shape of ConvTranspose's output for X " +
                         DescribeBlob(def.input(0), in[0]) + " and filter " +
                         DescribeBlob(def.input(1), in[1]));
  }
  return s;
}

void SumBias(const ConvTransposeShapes& s, const float* dy, float* dbias) {
  const int64_t m = s.y_dims[1], plane = s.y_plane();
  for (int64_t c = 0; c < m; ++c) {
    double sum = 0.0;
    for (int64_t n = 0; n < s.y_dims[0]; ++n) {
      const float* p = dy + (n * m + c) * plane;
      for (int64_t i = 0; i < plane; ++i) sum += p[i];
    }
    dbias[c] = static_cast<float>(sum);
  }
}

}  // namespace

void ConvTransposeGradientOp::Run() {
  for (int i = 0; i < 3; ++i) CheckInputType(*this, i, {DType::kFloat32});
  const ConvTransposeShapes s = ComputeGradientShapes(def(), InputShapeInfos(*this));
  const GradientOutputs o = GradientOutputsOf(def());
  CheckConvTransposeBlasSizes(def(), s);
  const float* x = Input(0).data<float>();
  const float* filter = Input(1).data<float>();
  const float* dy = Input(2).data<float>();
  Tensor* dfilter_out = Output(0, DType::kFloat32, s.filter_dims);
  float* dfilter = dfilter_out->mutable_data<float>();
  std::fill_n(dfilter, dfilter_out->numel(), 0.f);
  if (o.dbias >= 0) {
    SumBias(s, dy, Output(o.dbias, DType::kFloat32, {s.y_dims[1]})->mutable_data<float>());
  }
  float* dx = nullptr;
  if (o.dx >= 0) {
    Tensor* dx_out = Output(o.dx, DType::kFloat32, s.x_dims);
    dx = dx_out->mutable_data<float>();
    std::fill_n(dx, dx_out->numel(), 0.f);
  }
  const int64_t cin = s.in_channels_per_group(), cout = s.out_channels_per_group();
  const int64_t rows = s.col_rows(), hw = s.x_plane();
  if (rows * hw == 0 || cin == 0) return;
  const int m = static_cast<int>(cin), r = static_cast<int>(rows), k = static_cast<int>(hw);
  float* col = static_cast<float*>(ThreadScratch().Reserve(rows * hw * sizeof(float)));
  for (int64_t n = 0; n < s.x_dims[0]; ++n) {
    for (int64_t g = 0; g < s.group; ++g) {
      const int64_t group_index = n * s.group + g;
      Im2Col(dy + group_index * cout * s.y_plane(), cout, s.y_size(), s.window, s.window.output,
             col);
      const float* filter_g = filter + g * cin * rows;
      // dfilter_g [cin, rows] += X_g [cin, hw] cols^T [hw, rows]
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, r, k, 1.f, x + group_index * cin * hw,
                  k, col, k, 1.f, dfilter + g * cin * rows, r);
      if (dx == nullptr) continue;
      // dX_g [cin, hw] = W_g [cin, rows] cols [rows, hw]
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, r, 1.f, filter_g, r, col, k, 0.f,
                  dx + group_index * cin * hw, k);
    }
  }
}

BRAID_OPERATOR_SCHEMA(ConvTransposeGradient)
    .ArgsOf("ConvTranspose")
    .Arg("no_bias", ArgKind::kInt)
    .NumInputs(3)
    .NumOutputs(1, 3)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 3) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const ConvTransposeShapes s = ComputeGradientShapes(def, in);
      const GradientOutputs o = GradientOutputsOf(def);
      std::vector<ShapeInfo> out(def.output_size());
      out[0] = {DType::kFloat32, s.filter_dims, true};
      if (o.dbias >= 0) out[o.dbias] = {DType::kFloat32, {s.y_dims[1]}, true};
      if (o.dx >= 0) out[o.dx] = {DType::kFloat32, s.x_dims, true};
      return out;
    })
    .SetDoc(
        "Gradient of ConvTranspose: X, filter, dY -> dfilter, dbias (unless no_bias=1), dX (when "
        "named). ConvTranspose's window arguments.");

BRAID_REGISTER_CPU_OPERATOR(ConvTransposeGradient, ConvTransposeGradientOp);

}  // namespace braid
