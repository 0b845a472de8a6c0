// Gradient registry: how each op type builds its gradient ops (Caffe2's gradient makers).
//
// A maker gets the forward op, the names of its outputs' gradients ("" for an output with no
// gradient) and the names the autodiff wants its inputs' gradients written to, and returns the
// gradient ops plus which inputs got a gradient. AddGradientOperators (runtime/core/autodiff.h)
// chooses the names (Caffe2's: "X_grad", or "X_grad_autosplit_<k>" parts summed into "X_grad" when
// X feeds several ops), so makers never invent gradient blob names themselves.
//
//   GradientOps ReluGradient(const GradientRequest& r) {
//     return {{MakeGradientOp(r.op, "ReluGradient", {r.op.output(0), r.output_grads[0]},
//                             {r.input_grads[0]})},
//             {true}};
//   }
//   BRAID_REGISTER_GRADIENT(Relu, ReluGradient);   // beside the op's schema and kernel
//   BRAID_NO_GRADIENT(Accuracy);                    // no gradient flows through it
//
// Thread safety: registration happens during static initialisation; lookups are read-only.
#ifndef BRAID_RUNTIME_CORE_GRADIENT_H_
#define BRAID_RUNTIME_CORE_GRADIENT_H_

#include <functional>
#include <string>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

struct GradientRequest {
  const OperatorDef& op;                  // the forward op
  std::vector<std::string> output_grads;  // per output: its gradient blob, or "" if none
  std::vector<std::string> input_grads;   // per input: where to write its gradient
};

struct GradientOps {
  std::vector<OperatorDef> ops;       // appended to the net in this order
  std::vector<bool> has_input_grad;   // per input: whether ops write input_grads[i]
};

using GradientMaker = std::function<GradientOps(const GradientRequest&)>;

bool RegisterGradient(const std::string& type, GradientMaker maker);
// The maker of an op type; null for types without one. A type registered with BRAID_NO_GRADIENT
// has a maker that returns no ops.
const GradientMaker* FindGradientMaker(const std::string& type);

// A gradient op of `type` for `forward`: its arguments, device option and engine are copied from
// the forward op, is_gradient_op is set.
OperatorDef MakeGradientOp(const OperatorDef& forward, const std::string& type,
                           const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs);

#define BRAID_GRADIENT_CONCAT_(a, b) a##b
#define BRAID_GRADIENT_NAME_(type, line) BRAID_GRADIENT_CONCAT_(braid_gradient_##type##_, line)
// Variadic so a lambda maker with commas in its body is one argument.
#define BRAID_REGISTER_GRADIENT(type, ...)                                    \
  [[maybe_unused]] static const bool BRAID_GRADIENT_NAME_(type, __LINE__) = \
      ::braid::RegisterGradient(#type, __VA_ARGS__)
#define BRAID_NO_GRADIENT(type)                                                              \
  BRAID_REGISTER_GRADIENT(type, [](const ::braid::GradientRequest& r) {                      \
    return ::braid::GradientOps{{}, std::vector<bool>(r.op.input_size(), false)};          \
  })

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_GRADIENT_H_
