#include "ops/tensor/slice_op.h"

#include <cstring>
#include <string>

#include "ops/common/op_checks.h"
#include "ops/tensor/int_list_input.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

// Whether op `def` (Slice, or SliceGradient with `num_inputs` inputs) takes starts/ends as inputs
// rather than arguments; throws when they are given both ways or neither.
bool BoundsFromInputs(const OperatorDef& def, int num_inputs) {
  const ArgumentReader args(def.arg());
  const bool from_arguments = args.Has("starts") || args.Has("ends");
  const bool from_inputs = def.input_size() == num_inputs;
  if (!from_inputs && def.input_size() != num_inputs - 2) {
    ThrowInvalidArgument(def.type() + " takes starts and ends both as inputs or both as arguments");
  }
  if (from_arguments && from_inputs) {
    ThrowInvalidArgument("give starts and ends as inputs '" + def.input(1) + "', '" + def.input(2) +
                         "' or as arguments, not both");
  }
  if (!from_arguments && !from_inputs) {
    ThrowInvalidArgument(def.type() + " needs the arguments 'starts' and 'ends' or them as inputs");
  }
  return from_inputs;
}

SliceBox BoxFromArguments(const OperatorDef& def, const ShapeInfo& x) {
  const ArgumentReader args(def.arg());
  return ComputeSliceBox(def, x, args.GetList<int64_t>("starts"), args.GetList<int64_t>("ends"));
}

// The box of op (Slice: the data is input 0; starts, ends are inputs 1, 2 when given so).
SliceBox BoxOf(const OperatorBase& op, int num_inputs_with_bounds) {
  const OperatorDef& def = op.def();
  const ShapeInfo x = ShapeOf(op.Input(0));
  if (BoundsFromInputs(def, num_inputs_with_bounds)) {
    return ComputeSliceBox(def, x, ReadIntList(op, 1), ReadIntList(op, 2));
  }
  return BoxFromArguments(def, x);
}

// Copies between the box of a tensor of `dims` and a dense tensor of the box's dims, `element`
// bytes each: `from` dense into the box of `to` when `into_box`, else from the box of `from` to
// dense `to`.
void CopyBox(const std::vector<int64_t>& dims, const SliceBox& b, size_t element, const char* from,
             char* to, bool into_box) {
  const int n = static_cast<int>(dims.size());
  if (SizeFromDim(b.dims, 0) == 0) return;
  int last = n - 1;  // the last dim the box does not cover whole; later ones join each run
  while (last >= 0 && b.dims[last] == dims[last]) --last;
  if (last < 0) {
    std::memcpy(to, from, SizeFromDim(dims, 0) * element);
    return;
  }
  const size_t run_bytes = b.dims[last] * SizeFromDim(dims, last + 1) * element;
  std::vector<int64_t> strides(n, 1);  // of the full tensor, in elements
  for (int d = n - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  int64_t offset = 0;
  for (int d = 0; d < n; ++d) offset += b.starts[d] * strides[d];
  std::vector<int64_t> index(last, 0);
  const int64_t runs = SizeToDim(b.dims, last);
  for (int64_t run = 0; run < runs; ++run) {
    const size_t dense = run * run_bytes;
    const size_t full = offset * element;
    std::memcpy(to + (into_box ? full : dense), from + (into_box ? dense : full), run_bytes);
    for (int d = last - 1; d >= 0; --d) {
      if (++index[d] < b.dims[d]) {
        offset += strides[d];
        break;
      }
      offset -= (b.dims[d] - 1) * strides[d];
      index[d] = 0;
    }
  }
}

GradientOps SliceGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, std::vector<bool>(r.op.input_size(), false)};
  std::vector<std::string> inputs(r.op.input().begin(), r.op.input().end());
  inputs.push_back(r.output_grads[0]);
  std::vector<bool> has_input_grad(r.op.input_size(), false);
  has_input_grad[0] = true;
  return {{MakeGradientOp(r.op, "SliceGradient", inputs, {r.input_grads[0]})}, has_input_grad};
}

}  // namespace

SliceBox ComputeSliceBox(const OperatorDef& def, const ShapeInfo& x,
                         const std::vector<int64_t>& starts, const std::vector<int64_t>& ends) {
  const size_t ndim = x.dims.size();
  if (starts.size() != ends.size() || starts.size() > ndim) {
    ThrowInvalidArgument("starts " + DimsText(starts) + " and ends " + DimsText(ends) +
                         " must have one length, at most the rank of input " +
                         DescribeBlob(def.input(0), x));
  }
  SliceBox box{std::vector<int64_t>(ndim, 0), x.dims};
  for (size_t d = 0; d < starts.size(); ++d) {
    const int64_t n = x.dims[d];
    int64_t start = starts[d] < 0 ? n + 1 + starts[d] : std::min(starts[d], n);
    int64_t end = ends[d] < 0 ? n + 1 + ends[d] : std::min(ends[d], n);
    if (start < 0 || end < start) {
      ThrowInvalidArgument("cannot slice dim " + std::to_string(d) + " of input " +
                           DescribeBlob(def.input(0), x) + " from " + std::to_string(starts[d]) +
                           " to " + std::to_string(ends[d]) +
                           " (a negative index i means size + 1 + i)");
    }
    box.starts[d] = start;
    box.dims[d] = end - start;
  }
  return box;
}

void SliceOp::Run() {
  const Tensor& x = Input(0);
  CheckInputType(*this, 0, {x.dtype()});
  const SliceBox box = BoxOf(*this, 3);
  Tensor* y = Output(0, x.dtype(), box.dims);
  CopyBox(x.shape(), box, DTypeSize(x.dtype()), static_cast<const char*>(x.raw_data()),
          static_cast<char*>(y->raw_mutable_data(x.dtype())), /*into_box=*/false);
}

void SliceGradientOp::Run() {
  const Tensor& x = Input(0);
  const int dy_index = InputSize() - 1;
  const Tensor& dy = Input(dy_index);
  CheckInputType(*this, dy_index, {dy.dtype()});
  const SliceBox box = BoxOf(*this, 4);
  if (dy.shape() != box.dims) {
    ThrowInvalidArgument("dY " + DescribeInput(*this, dy_index) + " must have the slice's dims " +
                         DimsText(box.dims) + " of X " +
                         DescribeBlob(def().input(0), ShapeOf(x)));
  }
  Tensor* dx = Output(0, dy.dtype(), x.shape());
  char* full = static_cast<char*>(dx->raw_mutable_data(dy.dtype()));
  std::memset(full, 0, dx->nbytes());
  CopyBox(x.shape(), box, DTypeSize(dy.dtype()), static_cast<const char*>(dy.raw_data()), full,
          /*into_box=*/true);
}

namespace {

std::vector<ShapeInfo> InferSliceShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.empty()) return {};  // reported by OpSchema::Verify
  if (BoundsFromInputs(def, 3)) return {ShapeInfo{in[0].dtype, {}, false}};
  return {ShapeInfo{in[0].dtype, BoxFromArguments(def, in[0]).dims, true}};
}

std::vector<ShapeInfo> InferSliceGradientShape(const OperatorDef& def,
                                               const std::vector<ShapeInfo>& in) {
  if (in.size() < 2) return {};  // reported by OpSchema::Verify
  if (!BoundsFromInputs(def, 4)) {
    const std::vector<int64_t> box_dims = BoxFromArguments(def, in[0]).dims;
    if (in.back().dims != box_dims) {
      ThrowInvalidArgument("dY " + DescribeBlob(def.input(1), in.back()) +
                           " must have the slice's dims " + DimsText(box_dims) + " of X " +
                           DescribeBlob(def.input(0), in[0]));
    }
  }
  return {ShapeInfo{in.back().dtype, in[0].dims, true}};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(Slice)
    .Arg("starts", ArgKind::kInts)
    .Arg("ends", ArgKind::kInts)
    .NumInputs(1, 3)
    .NumOutputs(1)
    .TensorInference(InferSliceShape)
    .SetDoc("Y = X[starts:ends] per leading dim (arguments or inputs; negative i means size+1+i).");
BRAID_OPERATOR_SCHEMA(SliceGradient)
    .ArgsOf("Slice")
    .NumInputs(2, 4)
    .NumOutputs(1)
    .TensorInference(InferSliceGradientShape)
    .SetDoc(
        "Slice's gradient: inputs X, [starts, ends,] dY; dX = zeros like X with dY in the box.");

BRAID_REGISTER_CPU_OPERATOR(Slice, SliceOp);
BRAID_REGISTER_CPU_OPERATOR(SliceGradient, SliceGradientOp);
BRAID_REGISTER_GRADIENT(Slice, SliceGradient);

}  // namespace braid
