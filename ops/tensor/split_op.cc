#include "ops/tensor/split_op.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "ops/common/op_checks.h"
#include "ops/tensor/int_list_input.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

std::vector<int64_t> SizesFromArguments(const OperatorDef& def, const ShapeInfo& input,
                                        int64_t extent) {
  std::vector<int64_t> sizes = ArgumentReader(def.arg()).GetList<int64_t>("split");
  if (!sizes.empty()) return sizes;
  const int64_t n = def.output_size();
  if (extent % n != 0) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(0), input) + " has " +
                         std::to_string(extent) + " along the split axis, which " +
                         std::to_string(n) + " outputs cannot share equally; give `split`");
  }
  return std::vector<int64_t>(n, extent / n);
}

GradientOps SplitGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  const std::string& input_grad = r.input_grads[0];
  GradientOps grad;
  std::vector<std::string> pieces;
  for (int i = 0; i < op.output_size(); ++i) {
    pieces.push_back(r.output_grads[i]);
    if (!pieces.back().empty()) continue;
    pieces.back() = op.output(i) + "_grad_zeros";
    OperatorDef zeros = MakeGradientOp(op, "ConstantFill", {op.output(i)}, {pieces.back()});
    zeros.clear_arg();
    grad.ops.push_back(zeros);
  }
  OperatorDef concat =
      MakeGradientOp(op, "Concat", pieces, {input_grad, op.input(0) + "_grad_split_info"});
  auto* args = concat.mutable_arg();  // Concat takes Split's axis, add_axis and order, not split
  args->erase(std::remove_if(args->begin(), args->end(),
                             [](const Argument& a) { return a.name() == "split"; }),
              args->end());
  grad.ops.push_back(std::move(concat));
  grad.has_input_grad = std::vector<bool>(op.input_size(), false);
  grad.has_input_grad[0] = true;
  return grad;
}

}  // namespace

AxisLayout ComputeSplitLayout(const OperatorDef& def, const ShapeInfo& input,
                              std::vector<int64_t> sizes) {
  AxisLayout layout = ResolveConcatAxis(def, static_cast<int>(input.dims.size()));
  const int64_t extent = input.dims[layout.axis];
  if (def.input_size() == 2 && ArgumentReader(def.arg()).Has("split")) {
    ThrowInvalidArgument("give the split sizes as input '" + def.input(1) +
                         "' or as the `split` argument, not both");
  }
  if (def.input_size() < 2) sizes = SizesFromArguments(def, input, extent);
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  bool fits = static_cast<int>(sizes.size()) == def.output_size() && total == extent;
  for (int64_t size : sizes) fits = fits && size >= 0 && (!layout.add_axis || size == 1);
  if (!fits) {
    ThrowInvalidArgument("split sizes " + DimsText(sizes) + " do not cut input " +
                         DescribeBlob(def.input(0), input) + " along axis " +
                         std::to_string(layout.axis) + " into " +
                         std::to_string(def.output_size()) + " outputs" +
                         (layout.add_axis ? " of extent 1 (add_axis)" : ""));
  }
  layout.whole_dims = input.dims;
  layout.sizes = std::move(sizes);
  CompleteLayout(&layout);
  return layout;
}

void SplitOp::Run() {
  const Tensor& input = Input(0);
  CheckInputType(*this, 0, {input.dtype()});
  const AxisLayout layout = ComputeSplitLayout(
      def(), ShapeOf(input), InputSize() == 2 ? ReadIntList(*this, 1) : std::vector<int64_t>{});
  const DType dtype = input.dtype();
  const size_t bytes = DTypeSize(dtype);
  std::vector<char*> pieces;
  for (int i = 0; i < OutputSize(); ++i) {
    Tensor* piece = Output(i, dtype, layout.piece_dims[i]);
    pieces.push_back(static_cast<char*>(piece->raw_mutable_data(dtype)));
  }
  const char* whole = static_cast<const char*>(input.raw_data());
  ForEachBlock(layout, [&](int64_t whole_at, int piece, int64_t piece_at, int64_t count) {
    std::memcpy(pieces[piece] + piece_at * bytes, whole + whole_at * bytes, count * bytes);
  });
}

BRAID_OPERATOR_SCHEMA(Split)
    .Arg("axis", ArgKind::kInt)
    .Arg("add_axis", ArgKind::kInt)
    .Arg("order", ArgKind::kString)
    .Arg("split", ArgKind::kInts)
    .NumInputs(1, 2)
    .NumOutputs(1, OpSchema::kUnbounded)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      std::vector<ShapeInfo> out;
      if (in.size() != 1) return out;  // sizes from input 1's contents: unknown here
      const AxisLayout layout = ComputeSplitLayout(def, in[0], {});
      for (const std::vector<int64_t>& dims : layout.piece_dims) {
        out.push_back(ShapeInfo{in[0].dtype, dims, true});
      }
      return out;
    })
    .SetDoc("Cuts the input along `axis` into pieces sized by input 1, `split`, or equally.");

BRAID_REGISTER_CPU_OPERATOR(Split, SplitOp);
BRAID_REGISTER_GRADIENT(Split, SplitGradientOps);

}  // namespace braid
