// The public custom-op API (include/braid/custom_op.h) over braid's registries: a CustomOp becomes
// a schema (runtime/core/op_schema.h), a kernel per device type (runtime/core/op_registry.h) that
// calls the application's function through an OpContext, and a gradient maker
// (runtime/core/gradient.h). It lives in the device room because a cuda kernel's OpContext hands
// out the stream braid launches the op on (runtime/device/cuda/cuda_device.h).
#include "braid/custom_op.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"
#include "runtime/core/tensor.h"
#ifdef BRAID_WITH_CUDA
#include "runtime/device/cuda/cuda_device.h"
#endif

namespace braid {

DType ConstTensorRef::dtype() const { return tensor_->dtype(); }
const std::vector<int64_t>& ConstTensorRef::shape() const { return tensor_->shape(); }
int64_t ConstTensorRef::numel() const { return tensor_->numel(); }
const void* ConstTensorRef::raw_data() const { return tensor_->raw_data(); }

DType TensorRef::dtype() const { return tensor_->dtype(); }
const std::vector<int64_t>& TensorRef::shape() const { return tensor_->shape(); }
int64_t TensorRef::numel() const { return tensor_->numel(); }
void* TensorRef::raw_data() { return tensor_->raw_mutable_data(tensor_->dtype()); }

const OperatorDef& OpContext::def() const { return op_->def(); }
int OpContext::num_inputs() const { return op_->InputSize(); }
int OpContext::num_outputs() const { return op_->OutputSize(); }

ConstTensorRef OpContext::input(int i) const {
  if (i < 0 || i >= op_->InputSize()) {
    throw Error(Status::InvalidArgument("input " + std::to_string(i) + " of an op with " +
                                        std::to_string(op_->InputSize()) + " inputs"));
  }
  return ConstTensorRef(&op_->Input(i));
}

TensorRef OpContext::output(int i, DType dtype, const std::vector<int64_t>& shape) {
  if (i < 0 || i >= op_->OutputSize()) {
    throw Error(Status::InvalidArgument("output " + std::to_string(i) + " of an op with " +
                                        std::to_string(op_->OutputSize()) + " outputs"));
  }
  Tensor* tensor = op_->Output(i, dtype, shape);
  tensor->raw_mutable_data(dtype);  // allocated now: the kernel writes through raw_data()
  return TensorRef(tensor);
}

template <typename T>
T OpContext::ArgOf(const std::string& name, const T& default_value) const {
  return op_->args().Get<T>(name, default_value);
}
template <>
std::vector<int64_t> OpContext::ArgOf(const std::string& name, const std::vector<int64_t>&) const {
  return op_->args().GetList<int64_t>(name);
}
template <>
std::vector<float> OpContext::ArgOf(const std::string& name, const std::vector<float>&) const {
  return op_->args().GetList<float>(name);
}
template int OpContext::ArgOf(const std::string&, const int&) const;
template int64_t OpContext::ArgOf(const std::string&, const int64_t&) const;
template float OpContext::ArgOf(const std::string&, const float&) const;
template double OpContext::ArgOf(const std::string&, const double&) const;
template bool OpContext::ArgOf(const std::string&, const bool&) const;
template std::string OpContext::ArgOf(const std::string&, const std::string&) const;

bool OpContext::has_arg(const std::string& name) const { return op_->args().Has(name); }
std::string OpContext::device() const { return op_->device().ToString(); }

void* OpContext::cuda_stream() const {
#ifdef BRAID_WITH_CUDA
  if (op_->device().type == DeviceType::kCuda) return static_cast<void*>(CurrentCudaStream());
#endif
  return nullptr;
}

OperatorDef GradientOp(const OperatorDef& forward, const std::string& type,
                       const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs) {
  return MakeGradientOp(forward, type, inputs, outputs);
}

namespace {

// Runs the application's kernel; a failing Status is thrown, for the executor to report with the
// net, the op and the device.
class CustomOperator final : public OperatorBase {
 public:
  CustomOperator(const OperatorDef& def, Workspace* ws, std::shared_ptr<const CustomKernel> kernel)
      : OperatorBase(def, ws), kernel_(std::move(kernel)) {}
  void Run() override {
    OpContext context(this);
    const Status status = (*kernel_)(context);
    if (!status.ok()) {  // the executor adds the net and the op
      throw Error(
          Status(status.code(), status.message() + " (kernel on " + device().ToString() + ")"));
    }
  }

 private:
  std::shared_ptr<const CustomKernel> kernel_;
};

std::string CheckCustomOp(const CustomOp& op) {
  if (op.type.empty()) return "a custom op needs a type";
  if (FindSchema(op.type) != nullptr) {
    return "op type '" + op.type + "' is already registered (braid's or an earlier custom op)";
  }
  if (op.min_inputs < 0 || op.max_inputs < op.min_inputs || op.min_outputs < 0 ||
      op.max_outputs < op.min_outputs || op.max_outputs == 0) {
    return "custom op '" + op.type + "': bad arity (inputs " + std::to_string(op.min_inputs) +
           " to " + std::to_string(op.max_inputs) + ", outputs " + std::to_string(op.min_outputs) +
           " to " + std::to_string(op.max_outputs) + ")";
  }
  if (!op.run_cpu && !op.run_cuda) {
    return "custom op '" + op.type + "' has no kernel (run_cpu or run_cuda)";
  }
#ifndef BRAID_WITH_CUDA
  if (!op.run_cpu) {
    return "custom op '" + op.type + "' has only a CUDA kernel, and braid was built without CUDA";
  }
#endif
  std::set<std::string> args;
  for (const std::string& name : op.args) {
    if (name.empty() || !args.insert(name).second) {
      return "custom op '" + op.type + "': argument '" + name + "' is named twice or empty";
    }
  }
  if (op.gradient && op.no_gradient) {
    return "custom op '" + op.type + "' has a gradient function and no_gradient set";
  }
  for (const auto& [in, out] : op.allow_inplace) {
    if (in < 0 || in >= op.max_inputs || out < 0 || out >= op.max_outputs) {
      return "custom op '" + op.type + "': in-place pair {" + std::to_string(in) + ", " +
             std::to_string(out) + "} is outside its inputs or outputs";
    }
  }
  return "";
}

OpSchema::ShapeFunction ShapeFunctionOf(const CustomOp& op) {
  auto infer = op.infer;
  return [infer](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
    std::vector<TensorType> inputs;
    for (const ShapeInfo& s : in) inputs.push_back({s.dtype, s.dims, s.known});
    std::vector<TensorType> outputs;
    const Status status = infer(def, inputs, &outputs);
    if (!status.ok()) throw Error(status);
    std::vector<ShapeInfo> result(def.output_size());
    for (size_t i = 0; i < outputs.size() && i < result.size(); ++i) {
      result[i] = {outputs[i].dtype, outputs[i].shape, outputs[i].known};
    }
    return result;
  };
}

GradientMaker GradientMakerOf(const CustomOp& op) {
  if (op.no_gradient) {
    return [](const GradientRequest& r) {
      return GradientOps{{}, std::vector<bool>(r.op.input_size(), false)};
    };
  }
  auto gradient = op.gradient;
  return [gradient](const GradientRequest& r) {
    GradientOpsReply reply;
    const Status status = gradient(GradientOpsRequest{r.op, r.output_grads, r.input_grads}, &reply);
    if (!status.ok()) throw Error(status);
    if (reply.has_input_grad.size() != static_cast<size_t>(r.op.input_size())) {
      throw Error(Status::InvalidArgument(
          "the gradient function of custom op '" + r.op.type() + "' says for " +
          std::to_string(reply.has_input_grad.size()) + " inputs whether they get a gradient; " +
          "the op has " + std::to_string(r.op.input_size())));
    }
    return GradientOps{std::move(reply.ops), std::move(reply.has_input_grad)};
  };
}

void Register(const std::string& type, DeviceType device, const CustomKernel& kernel) {
  auto shared = std::make_shared<const CustomKernel>(kernel);
  RegisterOperator(
      type, device, "",
      [shared](const OperatorDef& def, Workspace* ws) -> std::unique_ptr<OperatorBase> {
        return std::make_unique<CustomOperator>(def, ws, shared);
      });
}

}  // namespace

Status RegisterCustomOp(const CustomOp& op) {
  const std::string problem = CheckCustomOp(op);
  if (!problem.empty()) return Status::InvalidArgument(problem);
  OpSchema& schema = RegisterSchema(op.type);
  schema.NumInputs(op.min_inputs, op.max_inputs).NumOutputs(op.min_outputs, op.max_outputs);
  schema.AllowInplace({op.allow_inplace.begin(), op.allow_inplace.end()});
  constexpr ArgKind kAnyKind = ArgKind::kInt | ArgKind::kFloat | ArgKind::kString | ArgKind::kInts |
                               ArgKind::kFloats | ArgKind::kStrings;
  std::vector<ArgSpec> args;
  for (const std::string& name : op.args) args.emplace_back(name, kAnyKind);
  if (args.empty()) {
    schema.NoArgs();
  } else {
    schema.Args(args);
  }
  if (op.infer) schema.TensorInference(ShapeFunctionOf(op));
  schema.SetDoc(op.doc.empty() ? "custom op '" + op.type + "'" : op.doc);
  if (op.run_cpu) Register(op.type, DeviceType::kCpu, op.run_cpu);
#ifdef BRAID_WITH_CUDA
  if (op.run_cuda) Register(op.type, DeviceType::kCuda, op.run_cuda);
#endif
  if (op.gradient || op.no_gradient) RegisterGradient(op.type, GradientMakerOf(op));
  return Status::OK();
}

namespace internal {

bool RegisterCustomOpOrDie(const CustomOp& op) {
  const Status status = RegisterCustomOp(op);
  if (!status.ok()) {
    std::fprintf(stderr, "braid: %s\n", status.ToString().c_str());
    std::exit(1);
  }
  return true;
}

}  // namespace internal
}  // namespace braid
