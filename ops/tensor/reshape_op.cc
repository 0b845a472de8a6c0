#include "ops/tensor/reshape_op.h"

#include <cstring>
#include <string>

#include "ops/common/op_checks.h"
#include "ops/tensor/int_list_input.h"
#include "runtime/core/argument.h"
#include "runtime/core/device_context.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

// The `shape` argument (empty with a new_shape input); throws when the shape is missing or given
// both ways.
std::vector<int64_t> RequestedFromArgument(const OperatorDef& def) {
  const bool has_argument = ArgumentReader(def.arg()).Has("shape");
  if (def.input_size() == 2 && has_argument) {
    ThrowInvalidArgument("give the new shape as input '" + def.input(1) +
                         "' or as the `shape` argument, not both");
  }
  if (def.input_size() < 2 && !has_argument) {
    ThrowInvalidArgument("Reshape needs the `shape` argument or a new_shape input");
  }
  return ArgumentReader(def.arg()).GetList<int64_t>("shape");
}

[[noreturn]] void BadShape(const OperatorDef& def, const ShapeInfo& data,
                           const std::vector<int64_t>& requested, const std::string& why) {
  ThrowInvalidArgument("cannot reshape input " + DescribeBlob(def.input(0), data) + " to " +
                       DimsText(requested) + ": " + why);
}

GradientOps ReshapeGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  const std::string& input_grad = r.input_grads[0];
  OperatorDef back = MakeGradientOp(op, "Reshape", {r.output_grads[0], op.output(1)},
                                    {input_grad, op.input(0) + "_grad_old_shape"});
  back.clear_arg();  // the shape comes from old_shape, never from the forward `shape`
  std::vector<bool> has_input_grad(op.input_size(), false);
  has_input_grad[0] = true;
  return GradientOps{{back}, has_input_grad};
}

}  // namespace

std::vector<int64_t> ReshapedDims(const OperatorDef& def, const ShapeInfo& data,
                                  const std::vector<int64_t>& requested) {
  std::vector<int64_t> dims = requested;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) {
      if (i >= data.dims.size()) BadShape(def, data, requested, "0 past the input's last dim");
      dims[i] = data.dims[i];
    } else if (dims[i] == -1) {
      if (inferred >= 0) BadShape(def, data, requested, "more than one -1");
      inferred = static_cast<int>(i);
      continue;
    } else if (dims[i] < 0) {
      BadShape(def, data, requested, "negative dim " + std::to_string(dims[i]));
    }
    if (__builtin_mul_overflow(known, dims[i], &known)) {  // UBSan found the wrap (to 0 here)
      BadShape(def, data, requested, "more elements than int64 can count");
    }
  }
  if (inferred >= 0) {
    if (known == 0 || data.numel() % known != 0) {
      BadShape(def, data, requested, "the -1 dim cannot be inferred");
    }
    dims[inferred] = data.numel() / known;
    known *= dims[inferred];
  }
  if (known != data.numel()) {
    BadShape(def, data, requested,
             "element counts differ (" + std::to_string(data.numel()) + " vs " +
                 std::to_string(known) + ")");
  }
  return dims;
}

void CopyReshaped(const Tensor& input, Tensor* output, std::vector<int64_t> dims) {
  if (output == &input) {
    output->Reshape(std::move(dims));
    return;
  }
  output->Resize(input.dtype(), std::move(dims));
  void* to = output->raw_mutable_data(input.dtype());
  const void* from = input.raw_data();
  // A memory plan may put the output over the input (in place): then the bytes are already there.
  if (to == from) return;
  if (output->device().is_host()) {
    std::memcpy(to, from, input.nbytes());
  } else {  // a device's memory (a CUDA device's is not host-addressable), on the current stream
    GetDeviceContext(output->device())
        ->CopyInKernel(to, output->device(), from, input.device(), input.nbytes());
  }
}

std::vector<int64_t> ReshapeData(OperatorBase& op) {
  const Tensor& data = op.Input(0);
  CheckInputType(op, 0, {data.dtype()});
  std::vector<int64_t> requested = RequestedFromArgument(op.def());
  if (op.InputSize() == 2) requested = ReadIntList(op, 1);
  std::vector<int64_t> dims = ReshapedDims(op.def(), ShapeOf(data), requested);
  std::vector<int64_t> old_dims = data.shape();  // before: the output may be data
  CopyReshaped(data, op.Output(0), std::move(dims));
  return old_dims;
}

void ReshapeOp::Run() {
  const std::vector<int64_t> old_dims = ReshapeData(*this);
  int64_t* old_shape =
      Output(1, DType::kInt64, {static_cast<int64_t>(old_dims.size())})->mutable_data<int64_t>();
  for (size_t i = 0; i < old_dims.size(); ++i) old_shape[i] = old_dims[i];
}

BRAID_OPERATOR_SCHEMA(Reshape)
    .Arg("shape", ArgKind::kInts)
    .NumInputs(1, 2)
    .NumOutputs(2)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.empty()) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      std::vector<ShapeInfo> out(2);
      const std::vector<int64_t> requested = RequestedFromArgument(def);
      if (in.size() == 1)
        out[0] = ShapeInfo{in[0].dtype, ReshapedDims(def, in[0], requested), true};
      out[1] = ShapeInfo{DType::kInt64, {static_cast<int64_t>(in[0].dims.size())}, true};
      return out;
    })
    .SetDoc(
        "Gives the data a new shape (`shape` or input new_shape; 0 copies a dim, -1 infers "
        "one); old_shape holds the original dims.");

BRAID_REGISTER_CPU_OPERATOR(Reshape, ReshapeOp);
BRAID_REGISTER_GRADIENT(Reshape, ReshapeGradientOps);

}  // namespace braid
