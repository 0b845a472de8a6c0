#include "ops/math/batch_matmul_op.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

struct BatchMatMulShapes {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> batch;           // Y's batch dims
  std::vector<int64_t> a_step, b_step;  // per batch dim: elements to step in A / B (0: broadcast)
  std::vector<int64_t> y_dims;

  int64_t batch_size() const { return SizeToDim(y_dims, static_cast<int>(batch.size())); }
};

// Strides (in matrices of `matrix` elements) of `dims`' batch dims, right-aligned to `ndim`
// batch dims of Y; 0 where the dim is 1 (broadcast) or missing.
std::vector<int64_t> BatchSteps(const std::vector<int64_t>& dims, size_t ndim, int64_t matrix) {
  std::vector<int64_t> steps(ndim, 0);
  int64_t stride = matrix;
  const size_t own = dims.size() - 2;
  for (size_t i = 0; i < own; ++i) {
    const size_t d = own - 1 - i;  // own dim, from the right
    if (dims[d] != 1) steps[ndim - 1 - i] = stride;
    stride *= dims[d];
  }
  return steps;
}

BatchMatMulShapes ComputeBatchMatMulShapes(const OperatorDef& def,
                                           const std::vector<ShapeInfo>& in) {
  const ArgumentReader args(def.arg());
  BatchMatMulShapes s;
  s.trans_a = args.Get<bool>("trans_a", false);
  s.trans_b = args.Get<bool>("trans_b", false);
  const bool broadcast = args.Get<bool>("broadcast", false);
  const ShapeInfo& a = in[0];
  const ShapeInfo& b = in[1];
  const std::string both =
      "A " + DescribeBlob(def.input(0), a) + " and B " + DescribeBlob(def.input(1), b);
  if (a.dtype != DType::kFloat32 || b.dtype != DType::kFloat32) {
    ThrowInvalidArgument(both + " must be float32");
  }
  if (a.dims.size() < 2 || b.dims.size() < 2) {
    ThrowInvalidArgument(both + " must have at least 2 dims (1-D operands are not supported)");
  }
  if (!broadcast && a.dims.size() != b.dims.size()) {
    ThrowInvalidArgument(both + " must have as many dims (or set broadcast=1)");
  }
  const size_t ra = a.dims.size(), rb = b.dims.size();
  s.m = a.dims[ra - (s.trans_a ? 1 : 2)];
  s.k = a.dims[ra - (s.trans_a ? 2 : 1)];
  const int64_t kb = b.dims[rb - (s.trans_b ? 1 : 2)];
  s.n = b.dims[rb - (s.trans_b ? 2 : 1)];
  if (kb != s.k) {
    ThrowInvalidArgument(both + " do not chain: K=" + std::to_string(s.k) +
                         " (trans_a=" + std::to_string(s.trans_a) + ") against " +
                         std::to_string(kb) + " (trans_b=" + std::to_string(s.trans_b) + ")");
  }
  const size_t ndim = std::max(ra, rb) - 2;
  s.batch.assign(ndim, 1);
  for (size_t i = 0; i < ndim; ++i) {  // from the right
    const int64_t da = i < ra - 2 ? a.dims[ra - 3 - i] : 1;
    const int64_t db = i < rb - 2 ? b.dims[rb - 3 - i] : 1;
    if (da != db && (!broadcast || (da != 1 && db != 1))) {
      ThrowInvalidArgument(both + " have batch dims that " +
                           (broadcast ? "do not broadcast" : "differ (or set broadcast=1)"));
    }
    s.batch[ndim - 1 - i] = da == 1 ? db : da;
  }
  s.a_step = BatchSteps(a.dims, ndim, s.m * s.k);
  s.b_step = BatchSteps(b.dims, ndim, s.k * s.n);
  s.y_dims = s.batch;
  s.y_dims.push_back(s.m);
  s.y_dims.push_back(s.n);
  return s;
}

void CheckBlasSize(const OperatorDef& def, const BatchMatMulShapes& s) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (s.m > kMax || s.n > kMax || s.k > kMax) {
    ThrowInvalidArgument("BatchMatMul '" + def.output(0) +
                         "' is too large for BLAS: M=" + std::to_string(s.m) +
                         " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
  }
}

OperatorDef MatMulWith(const GradientRequest& r, const std::string& a, const std::string& b,
                       bool trans_a, bool trans_b, const std::string& out) {
  OperatorDef op = MakeGradientOp(r.op, "BatchMatMul", {a, b}, {out});
  op.clear_arg();
  for (const auto& [name, value] : {std::pair{"trans_a", trans_a}, std::pair{"trans_b", trans_b}}) {
    Argument* arg = op.add_arg();
    arg->set_name(name);
    arg->set_i(value);
  }
  return op;
}

GradientOps BatchMatMulGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false, false}};
  const ArgumentReader args(r.op.arg());
  if (args.Get<bool>("broadcast", false)) {
    ThrowInvalidArgument("BatchMatMul '" + r.op.output(0) +
                         "' with broadcast=1 has no gradient (as in Caffe2)");
  }
  const bool ta = args.Get<bool>("trans_a", false), tb = args.Get<bool>("trans_b", false);
  const std::string &a = r.op.input(0), &b = r.op.input(1), &dy = r.output_grads[0];
  const std::string &da = r.input_grads[0], &db = r.input_grads[1];
  std::vector<OperatorDef> ops;
  if (!ta && !tb) {  // Y = A B
    ops = {MatMulWith(r, dy, b, false, true, da), MatMulWith(r, a, dy, true, false, db)};
  } else if (ta && !tb) {  // Y = A^T B
    ops = {MatMulWith(r, b, dy, false, true, da), MatMulWith(r, a, dy, false, false, db)};
  } else if (!ta && tb) {  // Y = A B^T
    ops = {MatMulWith(r, dy, b, false, false, da), MatMulWith(r, dy, a, true, false, db)};
  } else {  // Y = A^T B^T
    ops = {MatMulWith(r, b, dy, true, true, da), MatMulWith(r, dy, a, true, true, db)};
  }
  return {ops, {true, true}};
}

}  // namespace

void BatchMatMulOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  const BatchMatMulShapes s = ComputeBatchMatMulShapes(def(), InputShapeInfos(*this));
  CheckBlasSize(def(), s);
  const float* a = Input(0).data<float>();
  const float* b = Input(1).data<float>();
  Tensor* out = Output(0, DType::kFloat32, s.y_dims);
  float* y = out->mutable_data<float>();
  if (out->numel() == 0) return;
  if (s.k == 0) {  // BLAS may skip beta = 0 scaling for an empty product
    std::fill_n(y, out->numel(), 0.f);
    return;
  }
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const int lda = s.trans_a ? m : k, ldb = s.trans_b ? k : n;
  std::vector<int64_t> index(s.batch.size(), 0);
  int64_t a_offset = 0, b_offset = 0;
  for (int64_t i = 0; i < s.batch_size(); ++i) {
    cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans,
                s.trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.f, a + a_offset, lda,
                b + b_offset, ldb, 0.f, y + i * s.m * s.n, n);
    // Next batch index (row-major), moving the offsets with it.
    for (int d = static_cast<int>(index.size()) - 1; d >= 0; --d) {
      a_offset += s.a_step[d];
      b_offset += s.b_step[d];
      if (++index[d] < s.batch[d]) break;
      a_offset -= s.a_step[d] * s.batch[d];
      b_offset -= s.b_step[d] * s.batch[d];
      index[d] = 0;
    }
  }
}

BRAID_OPERATOR_SCHEMA(BatchMatMul)
    .Arg("trans_a", ArgKind::kInt)
    .Arg("trans_b", ArgKind::kInt)
    .Arg("broadcast", ArgKind::kInt)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 2) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{
          {DType::kFloat32, ComputeBatchMatMulShapes(def, in).y_dims, true}};
    })
    .SetDoc(
        "Y[b] = op(A[b]) op(B[b]) over the batch dims (all but the last two). Args: trans_a 0, "
        "trans_b 0, broadcast 0 (1: numpy broadcasting of the batch dims).");

BRAID_REGISTER_CPU_OPERATOR(BatchMatMul, BatchMatMulOp);
BRAID_REGISTER_GRADIENT(BatchMatMul, BatchMatMulGradient);

}  // namespace braid
