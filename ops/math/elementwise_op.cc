#include "ops/math/elementwise_op.h"

#include <algorithm>

#include "runtime/core/argument.h"

namespace braid {
namespace {

[[noreturn]] void Mismatch(const OperatorDef& def, const ShapeInfo& a, const ShapeInfo& b,
                           const std::string& why) {
  ThrowInvalidArgument("inputs " + DescribeBlob(def.input(0), a) + " and " +
                       DescribeBlob(def.input(1), b) + " " + why);
}

}  // namespace

BroadcastSizes ElementwiseBroadcast(const OperatorDef& def, const ShapeInfo& a,
                                    const ShapeInfo& b) {
  if (a.dtype != b.dtype) Mismatch(def, a, b, "must have one type");
  BroadcastSizes s;
  if (a.dims == b.dims) {
    s.inner_b = a.numel();
  } else if (!ArgumentReader(def.arg()).Get<bool>("broadcast", false)) {
    Mismatch(def, a, b, "must have one shape (or set broadcast=1 to repeat B over A)");
  } else {
    std::vector<int64_t> b_dims = b.dims;
    while (!b_dims.empty() && b_dims.back() == 1) b_dims.pop_back();
    const int a_ndim = static_cast<int>(a.dims.size());
    const int b_ndim = static_cast<int>(b_dims.size());
    if (b_ndim > a_ndim) Mismatch(def, a, b, "cannot broadcast: B has more dims than A");
    // Caffe2's legacy rule: axis -1 (the default) aligns B with A's trailing dims.
    int axis = ArgumentReader(def.arg()).Get<int>("axis", -1);
    if (axis == -1) axis = a_ndim - b_ndim;
    if (axis < 0 || axis + b_ndim > a_ndim ||
        !std::equal(b_dims.begin(), b_dims.end(), a.dims.begin() + axis)) {
      Mismatch(def, a, b,
               "cannot broadcast: B's dims must equal A's dims from axis " + std::to_string(axis));
    }
    s.outer = SizeToDim(a.dims, axis);
    s.inner_b = b.numel();
    s.inner = SizeFromDim(a.dims, axis + b_ndim);
  }
  if (def.output_size() > 0 && def.output(0) == def.input(1) && b.numel() != a.numel()) {
    Mismatch(def, a, b, "cannot write the output in place of the smaller B");
  }
  return s;
}

void ReduceOverBroadcast(const BroadcastSizes& s, const float* a, double scale, float* b) {
  std::vector<double> sums(s.inner_b, 0.0);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t j = 0; j < s.inner_b; ++j) {
      const float* row = a + (o * s.inner_b + j) * s.inner;
      double sum = 0;
      for (int64_t p = 0; p < s.inner; ++p) sum += row[p];
      sums[j] += sum;
    }
  }
  for (int64_t j = 0; j < s.inner_b; ++j) b[j] = static_cast<float>(scale * sums[j]);
}

template <typename T>
void CheckNoZeroDivisor(const OperatorBase& op, const T* divisor, int64_t n) {
  const int64_t zero = std::find(divisor, divisor + n, T{0}) - divisor;
  if (zero < n) {
    ThrowInvalidArgument("input " + DescribeInput(op, 1) + " holds 0 at element " +
                         std::to_string(zero) + ": integer division by zero");
  }
}
template void CheckNoZeroDivisor(const OperatorBase&, const int32_t*, int64_t);
template void CheckNoZeroDivisor(const OperatorBase&, const int64_t*, int64_t);

std::vector<ShapeInfo> InferElementwiseShape(const OperatorDef& def,
                                             const std::vector<ShapeInfo>& in) {
  if (in.size() != 2 || def.output_size() != 1) return {};  // reported by OpSchema::Verify
  ElementwiseBroadcast(def, in[0], in[1]);
  return {in[0]};
}

}  // namespace braid
