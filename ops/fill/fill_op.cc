#include "ops/fill/fill_op.h"

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/element_count.h"

namespace braid {
namespace {

// Throws, naming the op (and `source` of the dims if not empty), for a negative dim or a shape
// whose element count overflows int64.
void CheckFillDims(const OperatorDef& def, const std::vector<int64_t>& dims,
                   const std::string& source) {
  try {
    ElementCount(dims);
  } catch (const Error& e) {
    ThrowInvalidArgument(def.type() + " '" + def.output(0) + "': " +
                         (source.empty() ? "" : source + ": ") + e.status().message());
  }
}

}  // namespace

FillOp::FillOp(const OperatorDef& def, Workspace* ws, DType dtype)
    : OperatorBase(def, ws),
      dtype_(dtype),
      input_as_shape_(args().Get<bool>("input_as_shape", false)) {
  if (input_as_shape_ && InputSize() != 1) {
    ThrowInvalidArgument("input_as_shape = 1 needs one input (the shape), got " +
                         std::to_string(InputSize()));
  }
  if (!input_as_shape_) FillShape(def, InputSize() == 1 ? &Input(0).shape() : nullptr);
}

void FillOp::Run() {
  std::vector<int64_t> dims =
      input_as_shape_ ? ShapeFromInputContents()
                      : FillShape(def(), InputSize() == 1 ? &Input(0).shape() : nullptr);
  Fill(Output(0, dtype_, std::move(dims)));
}

std::vector<int64_t> FillOp::ShapeFromInputContents() const {
  CheckInputType(*this, 0, {DType::kInt64, DType::kInt32});
  const Tensor& shape = Input(0);
  if (shape.ndim() != 1) {
    ThrowInvalidArgument("input_as_shape needs a 1-D shape tensor, got " + DescribeInput(*this, 0));
  }
  std::vector<int64_t> dims(shape.numel());
  for (int64_t i = 0; i < shape.numel(); ++i) {
    dims[i] = shape.dtype() == DType::kInt64 ? shape.data<int64_t>()[i] : shape.data<int32_t>()[i];
  }
  std::vector<int64_t> extra = args().GetList<int64_t>("extra_shape");
  dims.insert(dims.end(), extra.begin(), extra.end());
  CheckFillDims(def(), dims, "shape input " + DescribeInput(*this, 0));
  return dims;
}

std::vector<int64_t> FillShape(const OperatorDef& def, const std::vector<int64_t>* input_dims) {
  ArgumentReader args(def.arg());
  if (input_dims != nullptr && args.Has("shape")) {
    ThrowInvalidArgument("give either an input or the 'shape' argument, not both (input '" +
                         def.input(0) + "')");
  }
  std::vector<int64_t> dims = input_dims ? *input_dims : args.GetList<int64_t>("shape");
  std::vector<int64_t> extra = args.GetList<int64_t>("extra_shape");
  dims.insert(dims.end(), extra.begin(), extra.end());
  CheckFillDims(def, dims, "");
  return dims;
}

std::vector<ShapeInfo> InferFillShape(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                      DType dtype) {
  ShapeInfo out;
  out.dtype = dtype;
  if (ArgumentReader(def.arg()).Get<bool>("input_as_shape", false)) return {out};
  out.dims = FillShape(def, in.empty() ? nullptr : &in[0].dims);
  out.known = true;
  return {out};
}

const std::vector<ArgSpec>& FillShapeArgs() {
  static const auto* args = new std::vector<ArgSpec>{{"shape", ArgKind::kInts},
                                                     {"extra_shape", ArgKind::kInts},
                                                     {"input_as_shape", ArgKind::kInt}};
  return *args;
}

}  // namespace braid
