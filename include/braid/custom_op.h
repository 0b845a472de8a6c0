// braid's public API for an application's own ops (installed as <braid/custom_op.h>).
//
// An application defines an op type (its arity, arguments, shape inference, a CPU kernel, a CUDA
// kernel where it compiles CUDA, and how its gradient is made) and registers it; nets run by the
// Predictor, Session and Trainer then use it like any of braid's ops, in inference and in training
// (the autodiff asks its gradient function for the gradient ops, which may be custom ops too). On
// a sim device the CPU kernel runs. The kernels see the op's tensors through OpContext, never
// braid's internals (the structs here are plain aggregates of standard types and braid's
// OperatorDef: rebuild the application against each braid release).
//
//   braid::CustomOp scale;
//   scale.type = "AppScale";  // y = alpha * x
//   scale.args = {"alpha"};
//   scale.allow_inplace = {{0, 0}};
//   scale.infer = [](const braid::OperatorDef&, const std::vector<braid::TensorType>& in,
//                    std::vector<braid::TensorType>* out) {
//     *out = {in[0]};
//     return braid::Status::OK();
//   };
//   scale.run_cpu = [](braid::OpContext& ctx) {
//     const braid::ConstTensorRef x = ctx.input(0);
//     if (x.dtype() != braid::DType::kFloat32) return ctx.Invalid("x must be float32");
//     const float alpha = ctx.arg<float>("alpha", 1.f);
//     const float* in = x.data<float>();
//     float* y = ctx.output(0, braid::DType::kFloat32, x.shape()).data<float>();
//     for (int64_t i = 0; i < x.numel(); ++i) y[i] = alpha * in[i];
//     return braid::Status::OK();
//   };
//   scale.gradient = [](const braid::GradientOpsRequest& r, braid::GradientOpsReply* reply) {
//     // dx = alpha * dy: the op itself, with the forward op's arguments
//     reply->ops = {braid::GradientOp(r.op, "AppScale", {r.output_grads[0]}, {r.input_grads[0]})};
//     reply->has_input_grad = {true};
//     return braid::Status::OK();
//   };
//   braid::Status s = braid::RegisterCustomOp(scale);
//   if (!s.ok()) std::cerr << s.ToString() << "\n";
//
// Register from main before building any net, or at static initialisation with
// BRAID_REGISTER_CUSTOM_OP (in an object file the program links, not a static archive's, which
// the linker may drop). RegisterCustomOp is not synchronised with nets being built or run on
// other threads, so a plugin loaded with dlopen must register before any net is built; op types
// stay registered for the process's life (unloading the plugin would leave them dangling).
// Errors: RegisterCustomOp returns InvalidArgument, registering nothing, for a type already
// registered (braid's own or the application's), a bad arity or in-place pair, an argument named
// twice, or no kernel this build can run. A kernel reports failure by returning a Status (or
// throwing braid::Error or a std::exception); the net's Run then returns it, naming the net, the
// op (index, type, name) and the op's device. Thread safety: a kernel may run on any executor
// thread, several ops of the type at once; each call gets its own OpContext.
#ifndef BRAID_CUSTOM_OP_H_
#define BRAID_CUSTOM_OP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "braid/dtype.h"
#include "braid/status.h"

namespace braid {

class OperatorDef;   // <braid/braid.pb.h>: include it where a gradient function builds ops
class OperatorBase;  // braid's op, behind OpContext
class Tensor;        // braid's tensor, behind the references below

// A tensor a kernel reads: plain row-major elements in the memory of the op's device (host memory
// for a cpu or sim op, the GPU's for a cuda op). Valid during the kernel's call.
class ConstTensorRef {
 public:
  DType dtype() const;
  const std::vector<int64_t>& shape() const;
  int64_t numel() const;
  // The elements as T; nullptr when the tensor holds another dtype (check before reading).
  template <typename T>
  const T* data() const {
    return DTypeOf<T>() == dtype() ? static_cast<const T*>(raw_data()) : nullptr;
  }
  const void* raw_data() const;

 private:
  friend class OpContext;
  explicit ConstTensorRef(const Tensor* tensor) : tensor_(tensor) {}
  const Tensor* tensor_;
};

// An output a kernel writes, sized by OpContext::output. Valid during the kernel's call.
class TensorRef {
 public:
  DType dtype() const;
  const std::vector<int64_t>& shape() const;
  int64_t numel() const;
  // The elements as T; nullptr when the output was sized for another dtype.
  template <typename T>
  T* data() {
    return DTypeOf<T>() == dtype() ? static_cast<T*>(raw_data()) : nullptr;
  }
  void* raw_data();

 private:
  friend class OpContext;
  explicit TensorRef(Tensor* tensor) : tensor_(tensor) {}
  Tensor* tensor_;
};

// What a kernel sees of its op.
class OpContext {
 public:
  explicit OpContext(OperatorBase* op) : op_(op) {}

  const OperatorDef& def() const;
  int num_inputs() const;
  int num_outputs() const;
  ConstTensorRef input(int i) const;
  // Output i with `dtype` and `shape`, its memory allocated (or reused) for them. An output that
  // names the same blob as an input (in place) still holds that input's values when dtype and
  // shape are the input's; otherwise its memory may move and the input's data pointers dangle.
  TensorRef output(int i, DType dtype, const std::vector<int64_t>& shape);
  // Argument `name` of the op, or `default_value` when it has none. T: int, int64_t, float,
  // double, bool, std::string, std::vector<int64_t>, std::vector<float> (vectors: empty when
  // absent, the default ignored). An argument of another kind throws braid::Error, which the net
  // reports naming the op.
  template <typename T>
  T arg(const std::string& name, const T& default_value = T()) const {
    static_assert(std::is_same_v<T, int> || std::is_same_v<T, int64_t> ||
                      std::is_same_v<T, float> || std::is_same_v<T, double> ||
                      std::is_same_v<T, bool> || std::is_same_v<T, std::string> ||
                      std::is_same_v<T, std::vector<int64_t>> ||
                      std::is_same_v<T, std::vector<float>>,
                  "OpContext::arg reads int, int64_t, float, double, bool, std::string, "
                  "std::vector<int64_t> or std::vector<float>");
    return ArgOf<T>(name, default_value);
  }
  bool has_arg(const std::string& name) const;

  // The op's device: "cpu:0", "cuda:1", ...; for a cuda op, the cudaStream_t its kernels are to be
  // launched on (braid orders that stream after the op's inputs and before its consumers), as a
  // void*; nullptr on other devices.
  std::string device() const;
  void* cuda_stream() const;

  // InvalidArgument with `message`: a kernel's way to refuse its inputs.
  Status Invalid(const std::string& message) const { return Status::InvalidArgument(message); }

 private:
  template <typename T>
  T ArgOf(const std::string& name, const T& default_value) const;  // custom_op.cc instantiates
  OperatorBase* op_;
};

// A blob's type and shape as shape inference sees it; known = false: not known before running.
struct TensorType {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  bool known = true;
};

// The autodiff's request: the forward op, its outputs' gradient blobs ("" for an output without
// one) and where each input's gradient is to be written.
struct GradientOpsRequest {
  const OperatorDef& op;
  std::vector<std::string> output_grads;
  std::vector<std::string> input_grads;
};
struct GradientOpsReply {
  std::vector<OperatorDef> ops;      // appended to the net in this order
  std::vector<bool> has_input_grad;  // per input: whether ops write input_grads[i]
};

// A gradient op of `type` for `forward`, with its arguments, device and engine, marked as a
// gradient op.
OperatorDef GradientOp(const OperatorDef& forward, const std::string& type,
                       const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs);

using CustomKernel = std::function<Status(OpContext&)>;

struct CustomOp {
  std::string type;
  int min_inputs = 1, max_inputs = 1;
  int min_outputs = 1, max_outputs = 1;
  // (input, output) pairs that may name the same blob.
  std::vector<std::pair<int, int>> allow_inplace;
  // The argument names the op reads (a net giving it another is warned about, or refused in a
  // strict net, as for braid's ops).
  std::vector<std::string> args;
  std::string doc;
  // Output types and shapes from the inputs'. Without it, outputs are unknown until the op runs
  // (nets still run; memory planning and a cuda device's queued launches need it).
  std::function<Status(const OperatorDef&, const std::vector<TensorType>& inputs,
                       std::vector<TensorType>* outputs)>
      infer;
  CustomKernel run_cpu;   // cpu and sim devices
  CustomKernel run_cuda;  // cuda devices (registered only where braid was built with CUDA)
  // The gradient ops; unset: the op passes no gradient (training through it names the op).
  std::function<Status(const GradientOpsRequest&, GradientOpsReply*)> gradient;
  bool no_gradient = false;  // true: no gradient flows through the op (like Accuracy)
};

Status RegisterCustomOp(const CustomOp& op);

// Registers the CustomOp `make()` returns while the program starts; a failure is printed to
// stderr and ends the program.
#define BRAID_CUSTOM_OP_CONCAT_(a, b) a##b
#define BRAID_CUSTOM_OP_NAME_(line) BRAID_CUSTOM_OP_CONCAT_(braid_custom_op_, line)
#define BRAID_REGISTER_CUSTOM_OP(make)                                 \
  [[maybe_unused]] static const bool BRAID_CUSTOM_OP_NAME_(__LINE__) = \
      ::braid::internal::RegisterCustomOpOrDie(make)

namespace internal {
bool RegisterCustomOpOrDie(const CustomOp& op);
}  // namespace internal

}  // namespace braid

#endif  // BRAID_CUSTOM_OP_H_
