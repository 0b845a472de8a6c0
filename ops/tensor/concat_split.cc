#include "ops/tensor/concat_split.h"

#include <string>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"

namespace braid {

bool AddsAxis(const OperatorDef& def) {
  return ArgumentReader(def.arg()).Get<bool>("add_axis", false);
}

AxisLayout ResolveConcatAxis(const OperatorDef& def, int whole_ndim) {
  const bool nhwc = ArgumentReader(def.arg()).Get<std::string>("order", "NCHW") == "NHWC";
  const int fallback = nhwc ? 3 : 1;
  AxisLayout layout;
  layout.add_axis = AddsAxis(def);
  layout.axis = CanonicalAxis(def, "axis", fallback, whole_ndim);
  return layout;
}

void CompleteLayout(AxisLayout* layout) {
  const std::vector<int64_t>& whole = layout->whole_dims;
  layout->outer = SizeToDim(whole, layout->axis);
  layout->inner = SizeFromDim(whole, layout->axis + 1);
  layout->piece_dims.clear();
  for (int64_t size : layout->sizes) {
    std::vector<int64_t> dims = whole;
    dims[layout->axis] = size;
    if (layout->add_axis) dims.erase(dims.begin() + layout->axis);
    layout->piece_dims.push_back(std::move(dims));
  }
}

}  // namespace braid
