#include "runtime/core/autodiff.h"

#include <set>
#include <string_view>
#include <utility>

#include "braid/status.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_label.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

using BlobVersion = std::pair<std::string, int>;

// The forward net in SSA form: which version of each blob every op reads and writes.
struct ForwardVersions {
  std::vector<std::vector<int>> in, out;  // per op, per input / output
  std::map<std::string, int> final;       // the version each blob holds after the forward pass
  std::map<BlobVersion, int> writer;      // the op that wrote a version (version 0: none)
  std::set<std::string> blobs;            // every blob the forward ops name
};

ForwardVersions VersionsOf(const NetDef& net) {
  ForwardVersions v;
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    v.in.emplace_back();
    v.out.emplace_back();
    for (const std::string& in : op.input()) {
      v.in.back().push_back(v.final[in]);
      v.blobs.insert(in);
    }
    for (const std::string& out : op.output()) {
      const int version = ++v.final[out];
      v.out.back().push_back(version);
      v.writer[{out, version}] = i;
      v.blobs.insert(out);
    }
  }
  return v;
}

bool Reads(const OperatorDef& op, const std::string& blob) {
  for (const std::string& in : op.input()) {
    if (in == blob) return true;
  }
  return false;
}

bool Writes(const OperatorDef& op, const std::string& blob) {
  for (const std::string& out : op.output()) {
    if (out == blob) return true;
  }
  return false;
}

bool IsIdentityCopy(const OperatorDef& op) {
  return op.type() == "Copy" && op.input_size() == 1 && op.output_size() == 1 &&
         op.input(0) == op.output(0);
}

void Rename(OperatorDef* op, const std::string& from, const std::string& to) {
  for (std::string& in : *op->mutable_input()) {
    if (in == from) in = to;
  }
  for (std::string& out : *op->mutable_output()) {
    if (out == from) out = to;
  }
}

[[noreturn]] void ThrowInvalid(const std::string& message) {
  throw Error(Status::InvalidArgument(message));
}

// A gradient op range's contribution to one blob version, written under a pending name that
// Resolve replaces with its final one.
struct Contribution {
  std::string pending;
  size_t begin, end;  // the maker's ops in the backward list
};

// Builds the backward ops of one net; see autodiff.h for the rules.
class BackwardBuilder {
 public:
  explicit BackwardBuilder(const NetDef& net) : net_(net), versions_(VersionsOf(net)) {}

  void SeedLoss(const std::string& loss);
  void Differentiate(int i);
  // Accumulates the gradients of versions no op wrote (the net's inputs and parameters).
  void ResolveExternal();
  std::vector<OperatorDef> TakeOps();
  const GradientMap& gradients() const { return gradients_; }

 private:
  // The final gradient name of a version with its contributions accumulated; "" if it has none.
  // Takes the key by value: callers may pass a reference into pending_, which this erases.
  std::string Resolve(BlobVersion key);
  bool TryWriteInPlace(const Contribution& c, const std::string& name);
  void CheckForwardReads(int i, const std::vector<OperatorDef>& grad_ops,
                         const std::vector<std::string>& output_grads,
                         const std::vector<std::string>& input_grads) const;
  GradientOps CallMaker(int i, const std::vector<std::string>& output_grads,
                        const std::vector<std::string>& input_grads) const;
  std::string GradientName(const std::string& name) const;
  std::string NewPending() { return "__braid_pending_grad_" + std::to_string(next_pending_++); }

  const NetDef& net_;
  ForwardVersions versions_;
  std::vector<OperatorDef> ops_;
  std::vector<bool> dropped_;  // per ops_ entry: removed (an identity Copy)
  std::map<BlobVersion, std::vector<Contribution>> pending_;
  std::map<std::string, int> autosplits_;  // per blob: autosplit names handed out so far
  GradientMap gradients_;
  int next_pending_ = 0;
};

std::string BackwardBuilder::GradientName(const std::string& name) const {
  if (versions_.blobs.count(name) > 0) {
    ThrowInvalid("net '" + net_.name() + "': gradient blob '" + name +
                 "' is already a blob of the net (were gradients added twice?)");
  }
  return name;
}

void BackwardBuilder::SeedLoss(const std::string& loss) {
  auto final = versions_.final.find(loss);
  if (final == versions_.final.end() || versions_.writer.count({loss, final->second}) == 0) {
    throw Error(Status::NotFound("net '" + net_.name() + "': loss '" + loss +
                                 "' is not written by any op of the net"));
  }
  const BlobVersion key{loss, final->second};
  if (pending_.count(key) > 0) return;  // named twice
  OperatorDef fill;
  fill.set_type("ConstantFill");
  fill.add_input(loss);
  fill.add_output(NewPending());
  Argument* value = fill.add_arg();
  value->set_name("value");
  value->set_f(1.f);
  const OperatorDef& writer = net_.op(versions_.writer.at(key));
  if (writer.has_device_option()) *fill.mutable_device_option() = writer.device_option();
  fill.set_is_gradient_op(true);
  pending_[key].push_back({fill.output(0), ops_.size(), ops_.size() + 1});
  ops_.push_back(std::move(fill));
  dropped_.push_back(false);
}

bool BackwardBuilder::TryWriteInPlace(const Contribution& c, const std::string& name) {
  bool wrote = false;
  for (size_t j = c.begin; j < c.end; ++j) {
    if (dropped_[j]) continue;
    OperatorDef op = ops_[j];
    Rename(&op, c.pending, name);
    if (IsIdentityCopy(op)) continue;
    // After the contribution is first written, `name` no longer holds the output gradient.
    if (wrote && Reads(ops_[j], name)) return false;
    wrote = wrote || Writes(ops_[j], c.pending);
    const OpSchema* schema = FindSchema(op.type());
    if (schema == nullptr || !schema->Verify(op).empty()) return false;
  }
  for (size_t j = c.begin; j < c.end; ++j) {
    if (dropped_[j]) continue;
    Rename(&ops_[j], c.pending, name);
    dropped_[j] = IsIdentityCopy(ops_[j]);
  }
  return true;
}

std::string BackwardBuilder::Resolve(BlobVersion key) {
  auto it = pending_.find(key);
  if (it == pending_.end()) return "";
  const std::vector<Contribution> parts = std::move(it->second);
  pending_.erase(it);
  const std::string& blob = key.first;
  const std::string name = GradientName(blob + "_grad");
  gradients_[blob] = name;
  if (parts.size() == 1 && TryWriteInPlace(parts[0], name)) return name;
  OperatorDef sum;
  sum.set_type("Sum");
  for (const Contribution& part : parts) {
    const std::string split =
        GradientName(blob + "_grad_autosplit_" + std::to_string(autosplits_[blob]++));
    for (size_t j = part.begin; j < part.end; ++j) Rename(&ops_[j], part.pending, split);
    sum.add_input(split);
  }
  sum.add_output(name);
  const OperatorDef& first = ops_[parts[0].begin];
  if (first.has_device_option()) *sum.mutable_device_option() = first.device_option();
  sum.set_is_gradient_op(true);
  ops_.push_back(std::move(sum));
  dropped_.push_back(false);
  return name;
}

GradientOps BackwardBuilder::CallMaker(int i, const std::vector<std::string>& output_grads,
                                       const std::vector<std::string>& input_grads) const {
  const OperatorDef& op = net_.op(i);
  const GradientMaker* maker = FindGradientMaker(op.type());
  if (maker == nullptr) {
    std::string needed;
    for (int k = 0; k < op.output_size(); ++k) {
      if (!output_grads[k].empty()) needed += (needed.empty() ? "'" : ", '") + op.output(k) + "'";
    }
    ThrowInvalid(OpLabelOf(net_, i) + ": no gradient maker is registered for op type '" +
                 op.type() + "', but the gradient of its output " + needed +
                 " is needed; register one with BRAID_REGISTER_GRADIENT, or BRAID_NO_GRADIENT "
                 "to stop the gradient at this op");
  }
  GradientOps grad;
  try {
    grad = (*maker)(GradientRequest{op, output_grads, input_grads});
  } catch (const Error& e) {
    throw Error(Status(e.status().code(),
                       OpLabelOf(net_, i) + ": building its gradient: " + e.status().message()));
  }
  if (static_cast<int>(grad.has_input_grad.size()) != op.input_size()) {
    ThrowInvalid(OpLabelOf(net_, i) + ": its gradient maker returned has_input_grad for " +
                 std::to_string(grad.has_input_grad.size()) + " inputs; the op has " +
                 std::to_string(op.input_size()));
  }
  for (int j = 0; j < op.input_size(); ++j) {
    for (const OperatorDef& g : grad.ops) {
      if (!grad.has_input_grad[j] && Writes(g, input_grads[j])) {
        ThrowInvalid(OpLabelOf(net_, i) + ": its gradient maker writes the gradient of input " +
                     std::to_string(j) + " '" + op.input(j) + "' but says it has none");
      }
    }
  }
  return grad;
}

// A gradient op reads forward blobs as the backward pass finds them: as the forward pass left
// them. That is what the forward op saw only if no later op overwrote the blob.
void BackwardBuilder::CheckForwardReads(int i, const std::vector<OperatorDef>& grad_ops,
                                        const std::vector<std::string>& output_grads,
                                        const std::vector<std::string>& input_grads) const {
  const OperatorDef& op = net_.op(i);
  std::set<std::string> local(output_grads.begin(), output_grads.end());
  local.insert(input_grads.begin(), input_grads.end());
  for (const OperatorDef& g : grad_ops) {
    for (const std::string& in : g.input()) {
      if (local.count(in) > 0) continue;
      int seen = -1;
      for (int j = 0; j < op.input_size(); ++j) {
        if (op.input(j) == in) seen = versions_.in[i][j];
      }
      for (int k = 0; k < op.output_size(); ++k) {
        if (op.output(k) == in) seen = versions_.out[i][k];
      }
      if (seen < 0 || versions_.final.at(in) == seen) continue;
      const int overwriter = versions_.writer.at({in, seen + 1});
      ThrowInvalid(OpLabelOf(net_, i) + ": its gradient reads '" + in +
                   "' as this op saw it, but " + OpLabelOf(net_, overwriter) +
                   " overwrites it later; write that op's output to a new blob");
    }
    local.insert(g.output().begin(), g.output().end());
  }
}

void BackwardBuilder::Differentiate(int i) {
  const OperatorDef& op = net_.op(i);
  std::vector<std::string> output_grads;
  bool any = false;
  for (int k = 0; k < op.output_size(); ++k) {
    output_grads.push_back(Resolve({op.output(k), versions_.out[i][k]}));
    any = any || !output_grads.back().empty();
  }
  if (!any || op.input_size() == 0) return;
  std::vector<std::string> input_grads;
  for (int j = 0; j < op.input_size(); ++j) input_grads.push_back(NewPending());
  GradientOps grad = CallMaker(i, output_grads, input_grads);
  CheckForwardReads(i, grad.ops, output_grads, input_grads);
  const size_t begin = ops_.size();
  for (OperatorDef& g : grad.ops) ops_.push_back(std::move(g));
  dropped_.resize(ops_.size(), false);
  for (int j = 0; j < op.input_size(); ++j) {
    if (!grad.has_input_grad[j]) continue;
    pending_[{op.input(j), versions_.in[i][j]}].push_back({input_grads[j], begin, ops_.size()});
  }
}

void BackwardBuilder::ResolveExternal() {
  while (!pending_.empty()) Resolve(pending_.begin()->first);
}

std::vector<OperatorDef> BackwardBuilder::TakeOps() {
  std::vector<OperatorDef> kept;
  for (size_t j = 0; j < ops_.size(); ++j) {
    if (!dropped_[j]) kept.push_back(std::move(ops_[j]));
  }
  ops_.clear();
  dropped_.clear();
  return kept;
}

}  // namespace

GradientMap AddGradientOperators(NetDef* net, const std::vector<std::string>& losses) {
  BackwardBuilder builder(*net);
  for (const std::string& loss : losses) builder.SeedLoss(loss);
  for (int i = net->op_size() - 1; i >= 0; --i) builder.Differentiate(i);
  builder.ResolveExternal();
  std::vector<OperatorDef> backward = builder.TakeOps();
  GradientMap gradients = builder.gradients();
  for (OperatorDef& op : backward) *net->add_op() = std::move(op);
  return gradients;
}

bool GradientNameOf(const std::string& blob, std::string* of) {
  constexpr std::string_view kSuffix = "_grad";
  const size_t at = blob.rfind(kSuffix);
  if (at == std::string::npos) return false;
  *of = at + kSuffix.size() == blob.size() ? blob.substr(0, at) : "";
  return true;
}

}  // namespace braid
