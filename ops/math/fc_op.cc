#include "ops/math/fc_op.h"

#include <cblas.h>

#include <algorithm>
#include <limits>

#include "ops/common/op_checks.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

void CheckBlasSize(const OperatorDef& def, const FcSizes& s) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (s.m > kMax || s.n > kMax || s.k > kMax) {
    ThrowInvalidArgument("FC '" + def.output(0) +
                         "' is too large for BLAS: M=" + std::to_string(s.m) +
                         " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
  }
}

// Caffe2's output order: dW, db, dX.
GradientOps FcGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false, false, false}};
  return {{MakeGradientOp(r.op, "FCGradient", {r.op.input(0), r.op.input(1), r.output_grads[0]},
                          {r.input_grads[1], r.input_grads[2], r.input_grads[0]})},
          {true, true, true}};
}

}  // namespace

FcSizes ComputeFcSizes(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  for (int i = 0; i < 3; ++i) {
    if (in[i].dtype != DType::kFloat32) {
      ThrowInvalidArgument("input " + DescribeBlob(def.input(i), in[i]) + " must be float32");
    }
  }
  const ShapeInfo& x = in[0];
  const ShapeInfo& w = in[1];
  const ShapeInfo& b = in[2];
  const int axis = CanonicalAxis(def, "axis", 1, static_cast<int>(x.dims.size()));
  const int axis_w = CanonicalAxis(def, "axis_w", 1, static_cast<int>(w.dims.size()));
  FcSizes s;
  s.m = SizeToDim(x.dims, axis);
  s.k = SizeFromDim(x.dims, axis);
  s.n = SizeToDim(w.dims, axis_w);
  if (SizeFromDim(w.dims, axis_w) != s.k) {
    ThrowInvalidArgument("X " + DescribeBlob(def.input(0), x) + " has K=" + std::to_string(s.k) +
                         " columns from axis " + std::to_string(axis) + ", but W " +
                         DescribeBlob(def.input(1), w) + " has " +
                         std::to_string(SizeFromDim(w.dims, axis_w)) + " from axis_w " +
                         std::to_string(axis_w));
  }
  if (b.numel() != s.n) {
    ThrowInvalidArgument("b " + DescribeBlob(def.input(2), b) +
                         " must have N=" + std::to_string(s.n) + " elements, the rows of W " +
                         DescribeBlob(def.input(1), w));
  }
  s.y_dims.assign(x.dims.begin(), x.dims.begin() + axis);
  s.y_dims.push_back(s.n);
  return s;
}

void FCOp::Run() {
  for (int i = 0; i < 3; ++i) CheckInputType(*this, i, {DType::kFloat32});
  const FcSizes s = ComputeFcSizes(def(), InputShapeInfos(*this));
  CheckBlasSize(def(), s);
  float* y = Output(0, DType::kFloat32, s.y_dims)->mutable_data<float>();
  const float* bias = Input(2).data<float>();
  for (int64_t i = 0; i < s.m; ++i) std::copy_n(bias, s.n, y + i * s.n);
  if (s.m == 0 || s.n == 0 || s.k == 0) return;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(s.m), static_cast<int>(s.n),
              static_cast<int>(s.k), 1.f, Input(0).data<float>(), static_cast<int>(s.k),
              Input(1).data<float>(), static_cast<int>(s.k), 1.f, y, static_cast<int>(s.n));
}

FcSizes ComputeFcGradientSizes(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  const ShapeInfo& w = in[1];
  const ShapeInfo& dy = in[2];
  const int axis_w = CanonicalAxis(def, "axis_w", 1, static_cast<int>(w.dims.size()));
  const ShapeInfo b{DType::kFloat32, {SizeToDim(w.dims, axis_w)}, true};
  FcSizes s = ComputeFcSizes(def, {in[0], w, b});
  if (dy.dtype != DType::kFloat32 || dy.dims != s.y_dims) {
    ThrowInvalidArgument("dY " + DescribeBlob(def.input(2), dy) + " must be float32" +
                         DimsText(s.y_dims) + ", the shape of FC's output for X " +
                         DescribeBlob(def.input(0), in[0]) + " and W " +
                         DescribeBlob(def.input(1), w));
  }
  return s;
}

void FCGradientOp::Run() {
  for (int i = 0; i < 3; ++i) CheckInputType(*this, i, {DType::kFloat32});
  const FcSizes s = ComputeFcGradientSizes(def(), InputShapeInfos(*this));
  CheckBlasSize(def(), s);
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  float* dw = Output(0, DType::kFloat32, Input(1).shape())->mutable_data<float>();
  float* db = Output(1, DType::kFloat32, {s.n})->mutable_data<float>();
  float* dx = OutputSize() > 2 ? Output(2, DType::kFloat32, Input(0).shape())->mutable_data<float>()
                               : nullptr;
  const float* x = Input(0).data<float>();
  const float* w = Input(1).data<float>();
  const float* dy = Input(2).data<float>();
  std::fill_n(db, n, 0.f);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) db[j] += dy[static_cast<int64_t>(i) * n + j];
  }
  if (m == 0 || n == 0 || k == 0) {  // BLAS may skip beta = 0 scaling for an empty product
    std::fill_n(dw, s.n * s.k, 0.f);
    if (dx != nullptr) std::fill_n(dx, s.m * s.k, 0.f);
    return;
  }
  // dW [N, K] = dY^T [N, M] X [M, K]; dX [M, K] = dY [M, N] W [N, K].
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, k, m, 1.f, dy, n, x, k, 0.f, dw, k);
  if (dx != nullptr) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, n, 1.f, dy, n, w, k, 0.f, dx, k);
  }
}

BRAID_OPERATOR_SCHEMA(FC)
    .Arg("axis", ArgKind::kInt)
    .Arg("axis_w", ArgKind::kInt)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 3) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const FcSizes s = ComputeFcSizes(def, in);
      return std::vector<ShapeInfo>{ShapeInfo{DType::kFloat32, s.y_dims, true}};
    })
    .SetDoc("Y = X W^T + b, with X flattened to [M, K] at `axis` and W to [N, K] at `axis_w`.");

BRAID_OPERATOR_SCHEMA(FCGradient)
    .ArgsOf("FC")
    .NumInputs(3)
    .NumOutputs(2, 3)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 3) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const FcSizes s = ComputeFcGradientSizes(def, in);
      std::vector<ShapeInfo> out{in[1], ShapeInfo{DType::kFloat32, {s.n}, true}, in[0]};
      out.resize(def.output_size());
      return out;
    })
    .SetDoc("FC's gradient: inputs X, W, dY; outputs dW, db and (optional) dX.");

BRAID_REGISTER_CPU_OPERATOR(FC, FCOp);
BRAID_REGISTER_CPU_OPERATOR(FCGradient, FCGradientOp);
BRAID_REGISTER_GRADIENT(FC, FcGradient);

}  // namespace braid
