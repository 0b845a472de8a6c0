#include "testing/gradient_checker.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "braid/status.h"
#include "runtime/core/device.h"
#include "runtime/core/gradient.h"
#include "testing/host_copies.h"

namespace braid::testing {
namespace {

// Why a check cannot go on; turned into an AssertionFailure by CheckGradient.
struct CheckFailure {
  std::string message;
};

[[noreturn]] void Fail(const std::string& message) { throw CheckFailure{message}; }

std::string OpLabel(const OperatorDef& op) {
  std::string label = op.type();
  if (!op.name().empty()) label += " '" + op.name() + "'";
  return label;
}

NetDef NetOfOps(const std::string& name, const std::vector<OperatorDef>& ops) {
  NetDef net;
  net.set_name(name);
  for (const OperatorDef& op : ops) *net.add_op() = op;
  return net;
}

void RunNet(Workspace* ws, const NetDef& net, const std::string& what) {
  Status status = ws->RunNetOnce(net);
  if (!status.ok()) Fail(what + " failed: " + status.ToString());
}

// `base`, or `base_<k>` for the smallest k >= 1 not yet taken; the name is then taken.
std::string UniqueName(const std::string& base, std::set<std::string>* taken) {
  std::string name = base;
  for (int k = 1; taken->count(name) > 0; ++k) name = base + "_" + std::to_string(k);
  taken->insert(name);
  return name;
}

const Tensor& BlobOrFail(const Workspace& ws, const std::string& name, const std::string& role) {
  const Tensor* t = ws.GetBlob(name);
  if (t == nullptr) Fail(role + " '" + name + "' does not exist in the workspace");
  return *t;
}

std::vector<float> Values(const Tensor& t) {
  const float* data = t.data<float>();
  return std::vector<float>(data, data + t.numel());
}

// One output in the loss, with its fixed weights.
struct LossTerm {
  std::string blob;
  std::vector<float> weights;
};

// The forward op with the state needed to evaluate the loss at perturbed inputs.
class ForwardEvaluator {
 public:
  ForwardEvaluator(const OperatorDef& op, Workspace* ws) : op_(op), ws_(ws) {
    std::set<std::string> outputs(op.output().begin(), op.output().end());
    for (const std::string& in : op.input()) {
      if (originals_.count(in) > 0) continue;
      const Tensor& t = BlobOrFail(*ws, in, "input");
      if (!t.has_storage()) Fail("input '" + in + "' " + t.ShapeString() + " holds no data");
      originals_[in].CopyFrom(t);
      if (outputs.count(in) > 0) overwritten_.push_back(in);
    }
  }

  // Restores the inputs the op overwrites, sets element j of `blob` to `value` (if blob is not
  // empty) and runs the op.
  void Run(const std::string& blob = "", int64_t j = 0, float value = 0) {
    for (const std::string& name : overwritten_) ws_->CreateBlob(name)->CopyFrom(originals_[name]);
    if (!blob.empty()) ws_->CreateBlob(blob)->mutable_data<float>()[j] = value;
    RunNet(ws_, NetOfOps("gradient_check_forward", {op_}), OpLabel(op_) + " forward run");
  }

  double Loss(const std::vector<LossTerm>& terms) const {
    double loss = 0;
    for (const LossTerm& term : terms) {
      const Tensor& y = BlobOrFail(*ws_, term.blob, "output");
      if (y.numel() != static_cast<int64_t>(term.weights.size())) {
        Fail("output '" + term.blob + "' changed size to " + y.ShapeString() +
             " under a perturbation");
      }
      const float* ys = y.data<float>();
      for (size_t i = 0; i < term.weights.size(); ++i) {
        loss += static_cast<double>(term.weights[i]) * static_cast<double>(ys[i]);
      }
    }
    return loss;
  }

  const Tensor& original(const std::string& input) const { return originals_.at(input); }
  // Puts every input back as it was fed.
  void RestoreInputs() {
    for (auto& [name, t] : originals_) ws_->CreateBlob(name)->CopyFrom(t);
  }

 private:
  OperatorDef op_;
  Workspace* ws_;
  std::map<std::string, Tensor> originals_;
  std::vector<std::string> overwritten_;
};

std::vector<int> LossOutputs(const OperatorDef& op, const Workspace& ws,
                             const GradientCheckOptions& options) {
  std::vector<int> outputs = options.outputs;
  if (outputs.empty()) {
    for (int k = 0; k < op.output_size(); ++k) {
      if (BlobOrFail(ws, op.output(k), "output").dtype() == DType::kFloat32) outputs.push_back(k);
    }
  }
  for (int k : outputs) {
    if (k < 0 || k >= op.output_size())
      Fail("output index " + std::to_string(k) + " is out of range");
    const Tensor& y = BlobOrFail(ws, op.output(k), "output");
    if (y.dtype() != DType::kFloat32) {
      Fail("output " + std::to_string(k) + " '" + op.output(k) + "' is " + y.ShapeString() +
           ", not float32");
    }
  }
  if (outputs.empty()) Fail(OpLabel(op) + " has no float32 output to build a loss from");
  return outputs;
}

std::vector<LossTerm> MakeLossTerms(const OperatorDef& op, const Workspace& ws,
                                    const std::vector<int>& outputs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> weight(-1.f, 1.f);
  std::vector<LossTerm> terms;
  std::set<std::string> seen;
  for (int k : outputs) {
    if (!seen.insert(op.output(k)).second) continue;
    LossTerm term{op.output(k), {}};
    term.weights.resize(ws.GetBlob(op.output(k))->numel());
    for (float& w : term.weights) w = weight(rng);
    terms.push_back(std::move(term));
  }
  return terms;
}

// The inputs to check, by blob: every index at which the blob is an input with a gradient.
std::map<std::string, std::vector<int>> CheckedInputs(const OperatorDef& op,
                                                      const ForwardEvaluator& forward,
                                                      const std::vector<bool>& has_grad,
                                                      const GradientCheckOptions& options) {
  auto is_float = [&](int i) { return forward.original(op.input(i)).dtype() == DType::kFloat32; };
  std::vector<int> inputs = options.inputs;
  if (inputs.empty()) {
    for (int i = 0; i < op.input_size(); ++i) {
      if (has_grad[i] && is_float(i)) inputs.push_back(i);
    }
  }
  std::map<std::string, std::vector<int>> by_blob;
  for (int i : inputs) {
    if (i < 0 || i >= op.input_size())
      Fail("input index " + std::to_string(i) + " is out of range");
    if (!has_grad[i]) {
      Fail("the gradient maker of " + op.type() + " gives no gradient for input " +
           std::to_string(i) + " '" + op.input(i) + "'");
    }
    if (!is_float(i)) {
      Fail("input " + std::to_string(i) + " '" + op.input(i) + "' is not float32");
    }
    by_blob[op.input(i)];
  }
  for (auto& [blob, indices] : by_blob) {
    for (int i = 0; i < op.input_size(); ++i) {
      if (op.input(i) == blob && has_grad[i]) indices.push_back(i);
    }
  }
  if (by_blob.empty()) Fail("no input of " + OpLabel(op) + " has a float32 gradient to check");
  return by_blob;
}

// The analytic gradient of `blob`: the sum of the gradients written for each of its indices.
std::vector<float> AnalyticGradient(const OperatorDef& op, const Workspace& ws, const Tensor& x,
                                    const std::vector<int>& indices,
                                    const std::vector<std::string>& input_grads) {
  std::vector<float> sum(x.numel(), 0.f);
  for (int i : indices) {
    const Tensor& g = BlobOrFail(ws, input_grads[i], "gradient of input " + std::to_string(i));
    if (g.dtype() != DType::kFloat32 || g.shape() != x.shape()) {
      Fail("gradient '" + input_grads[i] + "' of input " + std::to_string(i) + " '" + op.input(i) +
           "' is " + g.ShapeString() + ", but the input is " + x.ShapeString());
    }
    const float* gs = g.data<float>();
    for (size_t j = 0; j < sum.size(); ++j) sum[j] += gs[j];
  }
  return sum;
}

// Compares one input's analytic gradient with finite differences; "" if within tolerance.
std::string CompareInput(const OperatorDef& op, ForwardEvaluator* forward,
                         const std::vector<LossTerm>& terms, const std::string& blob,
                         const std::vector<float>& analytic, const GradientCheckOptions& options) {
  const std::vector<float> x = Values(forward->original(blob));
  double worst_excess = 1;  // |diff| / allowed of the worst failing element
  int64_t worst = -1;
  double worst_numeric = 0;
  int failures = 0;
  for (size_t j = 0; j < x.size(); ++j) {
    forward->Run(blob, j, x[j] + options.step);
    const double plus = forward->Loss(terms);
    forward->Run(blob, j, x[j] - options.step);
    const double minus = forward->Loss(terms);
    forward->RestoreInputs();
    const double numeric = (plus - minus) / (2.0 * options.step);
    const double allowed = options.tolerance * std::max(1.0, std::abs(numeric));
    const double excess = std::abs(analytic[j] - numeric) / allowed;
    if (!(excess <= 1)) {  // also catches NaN
      ++failures;
      if (worst < 0 || !(excess <= worst_excess)) {
        worst_excess = excess;
        worst = static_cast<int64_t>(j);
        worst_numeric = numeric;
      }
    }
  }
  if (worst < 0) return "";
  std::ostringstream message;
  message << OpLabel(op) << ": gradient of input '" << blob << "' "
          << forward->original(blob).ShapeString() << " is wrong at " << failures << " of "
          << x.size() << " elements; worst element " << worst << " (x = " << x[worst]
          << "): analytic " << analytic[worst] << ", numeric " << worst_numeric << " (tolerance "
          << options.tolerance << " * max(1, |numeric|), step " << options.step << ")";
  return message.str();
}

// The host copy of `t` (on any device) as bytes.
// Runs `op` and then `grad_ops` on sim:0 (a simulated GPU: the ops' CPU kernels, launched on its
// stream) from the inputs and output gradients `ws` held for the host run, and compares every blob
// they write with the host's, bit for bit; "" if all agree.
std::string CompareOnSimDevice(const OperatorDef& op, const std::vector<OperatorDef>& grad_ops,
                               const Workspace& ws, const ForwardEvaluator& forward,
                               const GradientRequest& request) {
  const Device sim{DeviceType::kSim, 0};
  Workspace sim_ws;
  for (const std::string& in : op.input()) {
    Tensor* t = sim_ws.CreateBlob(in);
    *t = Tensor(sim);
    t->CopyFrom(forward.original(in));
  }
  for (const std::string& grad : request.output_grads) {
    if (grad.empty() || sim_ws.HasBlob(grad)) continue;
    Tensor* t = sim_ws.CreateBlob(grad);
    *t = Tensor(sim);
    t->CopyFrom(BlobOrFail(ws, grad, "output gradient"));
  }
  std::vector<OperatorDef> ops = {op};
  ops.insert(ops.end(), grad_ops.begin(), grad_ops.end());
  std::vector<std::string> written;
  for (OperatorDef& o : ops) {
    *o.mutable_device_option() = DeviceToProto(sim);
    written.insert(written.end(), o.output().begin(), o.output().end());
  }
  const Status status = sim_ws.RunNetOnce(NetOfOps("gradient_check_on_sim", ops));
  if (!status.ok()) return "on sim:0, " + OpLabel(op) + " and its gradient ops failed: " +
                          status.ToString();
  for (const std::string& blob : written) {
    if (HostBytes(BlobOrFail(sim_ws, blob, "output")) != HostBytes(BlobOrFail(ws, blob, "output"))) {
      return "on sim:0, blob '" + blob + "' differs from the host's";
    }
  }
  return "";
}

::testing::AssertionResult Check(const OperatorDef& op, Workspace* ws,
                                 const GradientCheckOptions& options) {
  const GradientMaker* maker = FindGradientMaker(op.type());
  if (maker == nullptr) Fail("no gradient maker is registered for op type " + op.type());
  ForwardEvaluator forward(op, ws);
  forward.Run();
  const std::vector<LossTerm> terms =
      MakeLossTerms(op, *ws, LossOutputs(op, *ws, options), options.seed);

  std::set<std::string> taken(op.input().begin(), op.input().end());
  taken.insert(op.output().begin(), op.output().end());
  GradientRequest request{op, std::vector<std::string>(op.output_size()), {}};
  for (const LossTerm& term : terms) {
    const std::string name = UniqueName(term.blob + "_grad", &taken);
    for (int k = 0; k < op.output_size(); ++k) {
      if (op.output(k) == term.blob) request.output_grads[k] = name;
    }
    Tensor* grad = ws->CreateBlob(name);
    grad->Resize(DType::kFloat32, ws->GetBlob(term.blob)->shape());
    std::copy(term.weights.begin(), term.weights.end(), grad->mutable_data<float>());
  }
  for (const std::string& in : op.input()) {
    request.input_grads.push_back(UniqueName(in + "_grad", &taken));
  }
  GradientOps grad = (*maker)(request);
  if (static_cast<int>(grad.has_input_grad.size()) != op.input_size()) {
    Fail("the gradient maker of " + op.type() + " returned has_input_grad for " +
         std::to_string(grad.has_input_grad.size()) + " inputs; the op has " +
         std::to_string(op.input_size()));
  }
  const std::map<std::string, std::vector<int>> checked =
      CheckedInputs(op, forward, grad.has_input_grad, options);
  RunNet(ws, NetOfOps("gradient_check_backward", grad.ops), OpLabel(op) + " gradient ops");

  std::map<std::string, std::vector<float>> analytic;
  for (const auto& [blob, indices] : checked) {
    analytic[blob] =
        AnalyticGradient(op, *ws, forward.original(blob), indices, request.input_grads);
  }
  std::string failures = CompareOnSimDevice(op, grad.ops, *ws, forward, request);
  for (const auto& [blob, indices] : checked) {
    std::string failure = CompareInput(op, &forward, terms, blob, analytic[blob], options);
    if (!failure.empty()) failures += (failures.empty() ? "" : "\n") + failure;
  }
  forward.Run();  // leave the outputs as they are at the unperturbed inputs
  if (!failures.empty()) return ::testing::AssertionFailure() << failures;
  return ::testing::AssertionSuccess();
}

}  // namespace

::testing::AssertionResult CheckGradient(const OperatorDef& op, Workspace* ws,
                                         const GradientCheckOptions& options) {
  try {
    return Check(op, ws, options);
  } catch (const CheckFailure& failure) {
    return ::testing::AssertionFailure()
           << "CheckGradient(" << OpLabel(op) << "): " << failure.message;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "CheckGradient(" << OpLabel(op) << "): " << e.what();
  }
}

::testing::AssertionResult CheckNetGradient(Net* forward, Workspace* ws, const std::string& blob,
                                            const std::string& loss,
                                            const std::vector<float>& analytic, size_t stride,
                                            const GradientCheckOptions& options) {
  Tensor* x = ws->GetBlob(blob);
  if (x == nullptr || static_cast<size_t>(x->numel()) != analytic.size()) {
    return ::testing::AssertionFailure() << "blob '" << blob << "' does not match its gradient";
  }
  auto loss_sum = [&]() -> double {
    Status s = forward->Run();
    if (!s.ok()) throw Error(s);
    const Tensor* l = ws->GetBlob(loss);
    double sum = 0;
    for (int64_t i = 0; i < l->numel(); ++i) sum += l->data<float>()[i];
    return sum;
  };
  float* values = x->mutable_data<float>();
  for (size_t j = 0; j < analytic.size(); j += stride) {
    const float original = values[j];
    values[j] = original + options.step;
    const double plus = loss_sum();
    values[j] = original - options.step;
    const double minus = loss_sum();
    values[j] = original;
    const double numeric = (plus - minus) / (2 * options.step);
    if (std::abs(analytic[j] - numeric) > options.tolerance * std::max(1.0, std::abs(numeric))) {
      return ::testing::AssertionFailure()
             << blob << " element " << j << ": analytic " << analytic[j] << ", numeric " << numeric;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace braid::testing
