#include "ops/math/fc_op.h"

#include <cblas.h>

#include <algorithm>
#include <limits>

#include "ops/common/op_checks.h"
#include "runtime/op_registry.h"

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

BRAID_OPERATOR_SCHEMA(FC)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 3) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const FcSizes s = ComputeFcSizes(def, in);
      return std::vector<ShapeInfo>{ShapeInfo{DType::kFloat32, s.y_dims, true}};
    })
    .SetDoc("Y = X W^T + b, with X flattened to [M, K] at `axis` and W to [N, K] at `axis_w`.");

BRAID_REGISTER_CPU_OPERATOR(FC, FCOp);

}  // namespace braid
