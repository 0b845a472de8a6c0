#include "ops/tensor/transpose_op.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>

#include "braid/status.h"
#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

// A transpose with size-1 dims dropped and runs of dims that stay adjacent merged: Y is x_dims
// permuted by perm, and no perm[i + 1] == perm[i] + 1.
struct MergedTranspose {
  std::vector<int64_t> x_dims;
  std::vector<int> perm;
};

MergedTranspose Merge(const std::vector<int64_t>& dims, const std::vector<int>& perm) {
  std::vector<std::pair<int, int>> runs;  // input axes [first, last], in output order
  for (int axis : perm) {
    if (dims[axis] == 1) continue;
    if (!runs.empty() && runs.back().second + 1 == axis) {
      runs.back().second = axis;
    } else {
      runs.emplace_back(axis, axis);
    }
  }
  // Dropped size-1 axes between two axes of a run do not break it.
  for (size_t i = 0; i + 1 < runs.size(); ++i) {
    int next = runs[i].second + 1;
    while (next < static_cast<int>(dims.size()) && dims[next] == 1) ++next;
    if (next == runs[i + 1].first) {
      runs[i].second = runs[i + 1].second;
      runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      --i;
    }
  }
  std::vector<int> by_input(runs.size());
  std::iota(by_input.begin(), by_input.end(), 0);
  std::sort(by_input.begin(), by_input.end(),
            [&](int a, int b) { return runs[a].first < runs[b].first; });
  MergedTranspose m;
  m.perm.resize(runs.size());
  for (size_t k = 0; k < by_input.size(); ++k) {
    const auto& run = runs[by_input[k]];
    int64_t size = 1;
    for (int axis = run.first; axis <= run.second; ++axis) size *= dims[axis];
    m.x_dims.push_back(size);
    m.perm[by_input[k]] = static_cast<int>(k);
  }
  return m;
}

// y[b, c, r] = x[b, r, c], in square tiles so that both sides stay in cache.
template <typename U>
void TransposeRowsCols(const U* x, int64_t batch, int64_t rows, int64_t cols, U* y) {
  constexpr int64_t kTile = 32;
  for (int64_t b = 0; b < batch; ++b) {
    const U* xb = x + b * rows * cols;
    U* yb = y + b * rows * cols;
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) yb[c * rows + r] = xb[r * cols + c];
        }
      }
    }
  }
}

// Any merged transpose: Y in order, along its last dim in runs (contiguous or strided in X).
template <typename U>
void TransposeGeneral(const MergedTranspose& m, const U* x, U* y) {
  const int n = static_cast<int>(m.x_dims.size());
  std::vector<int64_t> x_strides(n, 1);
  for (int d = n - 2; d >= 0; --d) x_strides[d] = x_strides[d + 1] * m.x_dims[d + 1];
  const std::vector<int64_t> y_dims = PermutedDims(m.x_dims, m.perm);
  const int64_t inner = y_dims[n - 1];
  const int64_t inner_stride = x_strides[m.perm[n - 1]];
  const int64_t runs = SizeToDim(y_dims, n - 1);
  std::vector<int64_t> index(n, 0);
  int64_t x_offset = 0;
  for (int64_t run = 0; run < runs; ++run, y += inner) {
    if (inner_stride == 1) {
      std::copy_n(x + x_offset, inner, y);
    } else {
      for (int64_t i = 0; i < inner; ++i) y[i] = x[x_offset + i * inner_stride];
    }
    for (int d = n - 2; d >= 0; --d) {
      const int64_t stride = x_strides[m.perm[d]];
      if (++index[d] < y_dims[d]) {
        x_offset += stride;
        break;
      }
      x_offset -= (y_dims[d] - 1) * stride;
      index[d] = 0;
    }
  }
}

template <typename U>
void TransposeTyped(const MergedTranspose& m, const U* x, int64_t numel, U* y) {
  const int n = static_cast<int>(m.x_dims.size());
  if (numel == 0) return;
  if (n <= 1) {
    std::copy_n(x, numel, y);
  } else if (n == 2) {  // perm [1, 0]
    TransposeRowsCols(x, 1, m.x_dims[0], m.x_dims[1], y);
  } else if (n == 3 && m.perm[0] == 0) {  // perm [0, 2, 1]: NCHW <-> NHWC
    TransposeRowsCols(x, m.x_dims[0], m.x_dims[1], m.x_dims[2], y);
  } else {
    TransposeGeneral(m, x, y);
  }
}

GradientOps TransposeGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  OperatorDef back = MakeGradientOp(r.op, "Transpose", {r.output_grads[0]}, {r.input_grads[0]});
  const std::vector<int> axes = ArgumentReader(r.op.arg()).GetList<int>("axes");
  if (!axes.empty()) {  // absent: reversing is its own inverse
    back.clear_arg();
    Argument* inverse = back.add_arg();
    inverse->set_name("axes");
    std::vector<int> inverse_axes(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] >= 0 && axes[i] < static_cast<int>(axes.size())) {
        inverse_axes[axes[i]] = static_cast<int>(i);
      }
    }
    for (int axis : inverse_axes) inverse->add_ints(axis);
  }
  return {{back}, {true}};
}

}  // namespace

std::vector<int> TransposeAxes(const OperatorDef& def, const ShapeInfo& x) {
  const int ndim = static_cast<int>(x.dims.size());
  std::vector<int> axes = ArgumentReader(def.arg()).GetList<int>("axes");
  if (axes.empty()) {
    axes.resize(ndim);
    std::iota(axes.rbegin(), axes.rend(), 0);
    return axes;
  }
  std::vector<bool> seen(ndim, false);
  bool ok = static_cast<int>(axes.size()) == ndim;
  for (int axis : axes) {
    ok = ok && axis >= 0 && axis < ndim && !seen[axis];
    if (ok) seen[axis] = true;
  }
  if (!ok) {
    std::vector<int64_t> given(axes.begin(), axes.end());
    ThrowInvalidArgument("argument 'axes' = " + DimsText(given) +
                         " is not a permutation of the " + std::to_string(ndim) +
                         " dims of input " + DescribeBlob(def.input(0), x));
  }
  return axes;
}

std::vector<int64_t> PermutedDims(const std::vector<int64_t>& dims, const std::vector<int>& perm) {
  std::vector<int64_t> permuted(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) permuted[i] = dims[perm[i]];
  return permuted;
}

void TransposeTensor(const Tensor& x, const std::vector<int>& perm, Tensor* y) {
  y->Resize(x.dtype(), PermutedDims(x.shape(), perm));
  const MergedTranspose m = Merge(x.shape(), perm);
  const void* from = x.raw_data();
  void* to = y->raw_mutable_data(x.dtype());
  switch (DTypeSize(x.dtype())) {
    case 1:
      return TransposeTyped(m, static_cast<const uint8_t*>(from), x.numel(),
                            static_cast<uint8_t*>(to));
    case 2:
      return TransposeTyped(m, static_cast<const uint16_t*>(from), x.numel(),
                            static_cast<uint16_t*>(to));
    case 4:
      return TransposeTyped(m, static_cast<const uint32_t*>(from), x.numel(),
                            static_cast<uint32_t*>(to));
    case 8:
      return TransposeTyped(m, static_cast<const uint64_t*>(from), x.numel(),
                            static_cast<uint64_t*>(to));
  }
  throw Error(Status::InvalidArgument(std::string("transpose of ") + DTypeName(x.dtype()) +
                                      " elements: no element size braid moves"));
}

void TransposeOp::Run() {
  const Tensor& x = Input(0);
  CheckInputType(*this, 0, {x.dtype()});
  TransposeTensor(x, TransposeAxes(def(), ShapeOf(x)), Output(0));
}

BRAID_OPERATOR_SCHEMA(Transpose)
    .Arg("axes", ArgKind::kInts)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 1) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{
          ShapeInfo{in[0].dtype, PermutedDims(in[0].dims, TransposeAxes(def, in[0])), true}};
    })
    .SetDoc("Permutes the dims of X by `axes` (default: reversed); Y's dim i is X's axes[i].");

BRAID_REGISTER_CPU_OPERATOR(Transpose, TransposeOp);
BRAID_REGISTER_GRADIENT(Transpose, TransposeGradient);

}  // namespace braid
