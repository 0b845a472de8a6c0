#include "ops/tensor/concat_op.h"

#include <cstring>

#include "ops/common/op_checks.h"
#include "runtime/gradient.h"
#include "runtime/op_registry.h"

namespace braid {
namespace {

// Input i's dims as a piece of the whole (a 1 inserted at the axis when add_axis).
std::vector<int64_t> PieceDims(const AxisLayout& layout, const ShapeInfo& input) {
  std::vector<int64_t> dims = input.dims;
  if (layout.add_axis) dims.insert(dims.begin() + layout.axis, 1);
  return dims;
}

GradientOps ConcatGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  return GradientOps{
      {MakeGradientOp(op, "Split", {r.output_grads[0], op.output(1)}, r.input_grads)},
      std::vector<bool>(op.input_size(), true)};
}

}  // namespace

AxisLayout ComputeConcatLayout(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  const int whole_ndim = static_cast<int>(in[0].dims.size()) + (AddsAxis(def) ? 1 : 0);
  AxisLayout layout = ResolveConcatAxis(def, whole_ndim);
  const std::vector<int64_t> first = PieceDims(layout, in[0]);
  layout.whole_dims = first;
  layout.whole_dims[layout.axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool fits = in[i].dtype == in[0].dtype && in[i].dims.size() == in[0].dims.size();
    std::vector<int64_t> dims = fits ? PieceDims(layout, in[i]) : first;
    const int64_t extent = dims[layout.axis];
    dims[layout.axis] = first[layout.axis];
    if (!fits || dims != first) {
      ThrowInvalidArgument("input " + DescribeBlob(def.input(i), in[i]) + " does not fit input " +
                           DescribeBlob(def.input(0), in[0]) + ": Concat along axis " +
                           std::to_string(layout.axis) +
                           (layout.add_axis ? " (add_axis) needs one type and shape"
                                            : " needs one type and equal dims off the axis"));
    }
    layout.sizes.push_back(extent);
    layout.whole_dims[layout.axis] += extent;
  }
  CompleteLayout(&layout);
  return layout;
}

void ConcatOp::Run() {
  for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {Input(0).dtype()});
  const AxisLayout layout = ComputeConcatLayout(def(), InputShapeInfos(*this));
  const DType dtype = Input(0).dtype();
  const size_t bytes = DTypeSize(dtype);
  char* whole = static_cast<char*>(Output(0, dtype, layout.whole_dims)->raw_mutable_data(dtype));
  std::vector<const char*> pieces;
  for (int i = 0; i < InputSize(); ++i) {
    pieces.push_back(static_cast<const char*>(Input(i).raw_data()));
  }
  ForEachBlock(layout, [&](int64_t whole_at, int piece, int64_t piece_at, int64_t count) {
    std::memcpy(whole + whole_at * bytes, pieces[piece] + piece_at * bytes, count * bytes);
  });
  int32_t* split_info = Output(1, DType::kInt32, {InputSize()})->mutable_data<int32_t>();
  for (int i = 0; i < InputSize(); ++i) split_info[i] = static_cast<int32_t>(layout.sizes[i]);
}

BRAID_OPERATOR_SCHEMA(Concat)
    .Arg("axis", ArgKind::kInt)
    .Arg("add_axis", ArgKind::kInt)
    .Arg("order", ArgKind::kString)
    .NumInputs(1, OpSchema::kUnbounded)
    .NumOutputs(2)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.empty()) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const AxisLayout layout = ComputeConcatLayout(def, in);
      return std::vector<ShapeInfo>{
          ShapeInfo{in[0].dtype, layout.whole_dims, true},
          ShapeInfo{DType::kInt32, {static_cast<int64_t>(in.size())}, true}};
    })
    .SetDoc(
        "Joins the inputs along `axis` (or a new axis with add_axis); split_info holds their "
        "extents.");

BRAID_REGISTER_CPU_OPERATOR(Concat, ConcatOp);
BRAID_REGISTER_GRADIENT(Concat, ConcatGradientOps);

}  // namespace braid
