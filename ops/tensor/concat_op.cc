#include "ops/tensor/concat_op.h"

#include <cstring>

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

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

// Along the channels of 4-D NCHW tensors, concat_result and every input may be blocked (by any
// block, runtime/core/tensor.h); along another axis, none.
OpSchema::LayoutPorts ConcatLayoutPorts(const OperatorDef& def) {
  OpSchema::LayoutPorts ports;
  try {
    const AxisLayout layout = ResolveConcatAxis(def, 4);
    if (layout.axis != 1 || layout.add_axis) return ports;
  } catch (const Error&) {
    return ports;
  }
  for (int i = 0; i < def.input_size(); ++i) ports.inputs.push_back(i);
  ports.outputs = {0};
  return ports;
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
  const Layout out_layout = RequestedLayout(def(), 0);
  std::vector<Layout> layouts;
  bool one_layout = true;
  for (int i = 0; i < InputSize(); ++i) {
    layouts.push_back(Input(i).layout());
    one_layout = one_layout && layouts.back() == out_layout;
  }
  std::vector<const char*> pieces;
  for (int i = 0; i < InputSize(); ++i) {
    pieces.push_back(layouts[i] == Layout::kPlain
                         ? static_cast<const char*>(Input(i).raw_data())
                         : reinterpret_cast<const char*>(Input(i).any_layout_data<float>()));
  }
  Tensor* out = Output(0, dtype, layout.whole_dims);
  char* whole = static_cast<char*>(out->raw_mutable_data(dtype));
  out->set_layout(out_layout);  // throws for a shape that cannot be blocked
  if (one_layout) {
    // Along the channels of NCHW tensors, each sample of each input is one contiguous piece in
    // either layout, and the whole's sample is those pieces in order: the plain copy.
    ForEachBlock(layout, [&](int64_t whole_at, int piece, int64_t piece_at, int64_t count) {
      std::memcpy(whole + whole_at * bytes, pieces[piece] + piece_at * bytes, count * bytes);
    });
  } else {
    // Blocked inputs beside plain ones (ports allow it only along NCHW channels): element by
    // element through each tensor's offsets.
    const std::vector<int64_t>& d = layout.whole_dims;
    const int64_t spatial = d[2] * d[3];
    float* y = reinterpret_cast<float*>(whole);
    int64_t first = 0;
    for (int i = 0; i < InputSize(); ++i) {
      const float* x = reinterpret_cast<const float*>(pieces[i]);
      const int64_t c = layout.sizes[i];
      const Layout in_layout = layouts[i];
      ParallelFor(d[0] * c, [=](int64_t begin, int64_t end) {  // planes (n, ch) of input i
        for (int64_t plane = begin; plane < end; ++plane) {
          const int64_t n = plane / c, ch = plane % c;
          for (int64_t hw = 0; hw < spatial; ++hw) {
            y[NchwOffset(out_layout, n, first + ch, hw, d[1], spatial)] =
                x[NchwOffset(in_layout, n, ch, hw, c, spatial)];
          }
        }
      });
      first += c;
    }
  }
  int32_t* split_info = Output(1, DType::kInt32, {InputSize()})->mutable_data<int32_t>();
  for (int i = 0; i < InputSize(); ++i) split_info[i] = static_cast<int32_t>(layout.sizes[i]);
}

BRAID_OPERATOR_SCHEMA(Concat)
    .Arg("axis", ArgKind::kInt)
    .Arg("add_axis", ArgKind::kInt)
    .Arg("order", ArgKind::kString)
    .NumInputs(1, OpSchema::kUnbounded)
    .NumOutputs(2)
    .BlockedPorts(ConcatLayoutPorts)
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
