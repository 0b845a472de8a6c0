#include "ops/loss/class_scores.h"

#include <string>
#include <vector>

#include "ops/common/op_checks.h"

namespace braid {

ClassScores CheckClassScores(const OperatorDef& def, const ShapeInfo& x, const ShapeInfo& label,
                             int axis) {
  if (x.dtype != DType::kFloat32 || x.dims.empty()) {
    ThrowInvalidArgument("scores " + DescribeBlob(def.input(0), x) +
                         " must be float32 with at least one dim");
  }
  const ClassScores s{SizeToDim(x.dims, axis), SizeFromDim(x.dims, axis)};
  if (label.dtype != DType::kInt32) {
    ThrowInvalidArgument("label " + DescribeBlob(def.input(1), label) + " must be int32");
  }
  const std::vector<int64_t> rows(x.dims.begin(), x.dims.begin() + axis);
  std::vector<int64_t> label_rows = label.dims;
  if (label_rows.size() == rows.size() + 1 && label_rows.back() == 1) label_rows.pop_back();
  if (label_rows != rows) {
    ThrowInvalidArgument("label " + DescribeBlob(def.input(1), label) +
                         " must have one entry per " + "row of scores " +
                         DescribeBlob(def.input(0), x) + ": shape " + DimsText(rows) +
                         " (optionally followed by 1)");
  }
  return s;
}

ClassScores CheckClassScores(const OperatorDef& def, const ShapeInfo& x, const ShapeInfo& label) {
  return CheckClassScores(def, x, label, x.dims.size() == 1 ? 0 : 1);
}

void CheckLabelRange(const OperatorDef& def, int label_input, const int32_t* labels,
                     const ClassScores& s) {
  for (int64_t i = 0; i < s.n; ++i) {
    if (labels[i] < 0 || labels[i] >= s.d) {
      ThrowInvalidArgument("label '" + def.input(label_input) + "'[" + std::to_string(i) +
                           "] = " + std::to_string(labels[i]) + " is not in [0, " +
                           std::to_string(s.d) + ")");
    }
  }
}

}  // namespace braid
