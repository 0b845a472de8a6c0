#include "runtime/models/recompute.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "planner/dataflow.h"
#include "runtime/core/argument.h"
#include "runtime/core/fused_activation.h"

namespace braid {
namespace {

bool Reads(const OperatorDef& op, const std::string& blob) {
  return std::find(op.input().begin(), op.input().end(), blob) != op.input().end();
}

bool Writes(const OperatorDef& op, const std::string& blob) {
  return std::find(op.output().begin(), op.output().end(), blob) != op.output().end();
}

bool Touches(const OperatorDef& op, const std::string& blob) {
  return Reads(op, blob) || Writes(op, blob);
}

// A training SpatialBN at `bn`, then optionally a Sum adding `residual`, then a Relu writing `r`.
struct Pattern {
  std::vector<int> ops;  // bn, [sum], relu
  std::string residual;  // empty without a Sum
  std::string r;
};

bool IsTrainingBn(const OperatorDef& op) {
  return op.type() == "SpatialBN" && op.input_size() == 5 && op.output_size() == 5 &&
         !ArgumentReader(op.arg()).Get<bool>("is_test", false) && op.output(0) != op.input(0);
}

// The forward op after `from` that is the sole next user of `blob` (reading it, one output),
// when every other op touching `blob` after `from` comes after it and sees its output instead.
int SoleNextReader(const NetDef& net, int from, int first_backward, const std::string& blob) {
  for (int i = from + 1; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    if (!Touches(op, blob)) continue;
    if (i >= first_backward || !Reads(op, blob) || (Writes(op, blob) && op.output(0) != blob) ||
        op.output_size() != 1) {
      return -1;
    }
    if (op.output(0) == blob) return i;  // in place: later users see the new value
    for (int j = i + 1; j < net.op_size(); ++j) {
      if (Touches(net.op(j), blob)) return -1;
    }
    return i;
  }
  return -1;
}

bool FindPattern(const NetDef& net, int bn, int first_backward, Pattern* p) {
  if (!IsTrainingBn(net.op(bn))) return false;
  *p = Pattern{{bn}, "", net.op(bn).output(0)};
  int next = SoleNextReader(net, bn, first_backward, p->r);
  if (next < 0) return false;
  if (net.op(next).type() == "Sum" && net.op(next).input_size() == 2) {
    const OperatorDef& sum = net.op(next);
    p->residual = sum.input(0) == p->r ? sum.input(1) : sum.input(0);
    if (p->residual == p->r) return false;
    p->ops.push_back(next);
    p->r = sum.output(0);
    next = SoleNextReader(net, next, first_backward, p->r);
    if (next < 0) return false;
  }
  if (net.op(next).type() != "Relu" || net.op(next).input_size() != 1) return false;
  p->ops.push_back(next);
  p->r = net.op(next).output(0);
  return true;
}

// Whether any op in [begin, end) other than those in `except` writes `blob`.
bool WrittenIn(const NetDef& net, int begin, int end, const std::string& blob,
               const std::vector<int>& except = {}) {
  for (int i = begin; i < end; ++i) {
    if (std::find(except.begin(), except.end(), i) == except.end() && Writes(net.op(i), blob)) {
      return true;
    }
  }
  return false;
}

std::string UniqueName(const NetDef& net, const std::string& base) {
  const std::set<std::string> used = BlobNamesIn(net);
  std::string name = base;
  for (int k = 2; used.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
  return name;
}

// A blob the op at `at` reads that the backward pass writes before it (a gradient), or "".
std::string BackwardInputOf(const NetDef& net, int at, int first_backward) {
  const OperatorDef& reader = net.op(at);
  for (const auto* names : {&reader.input(), &reader.control_input()}) {
    for (const std::string& name : *names) {
      if (WrittenIn(net, first_backward, at, name)) return name;
    }
  }
  return "";
}

OperatorDef ApplyOp(const OperatorDef& bn, const std::string& residual, const std::string& after,
                    const std::string& out) {
  OperatorDef op;
  op.set_type("SpatialBNApply");
  if (!bn.name().empty()) op.set_name(bn.name() + "_recompute");
  for (int i : {0, 1, 2}) op.add_input(bn.input(i));
  op.add_input(bn.output(3));  // saved_mean
  op.add_input(bn.output(4));  // saved_inv_var
  if (!residual.empty()) op.add_input(residual);
  op.add_output(out);
  Argument* relu = op.add_arg();
  relu->set_name("relu");
  relu->set_i(1);
  if (bn.has_device_option()) *op.mutable_device_option() = bn.device_option();
  if (!after.empty()) op.add_control_input(after);
  return op;
}

void InsertOp(NetDef* net, int at, OperatorDef op) {
  *net->add_op() = std::move(op);
  for (int i = net->op_size() - 1; i > at; --i) net->mutable_op()->SwapElements(i, i - 1);
}

// The backward ops reading `blob` as an input, in net order; none when a backward op names it as
// a control input (the rewrites leave such a blob alone).
std::vector<int> BackwardReaders(const NetDef& net, int first_backward, const std::string& blob) {
  std::vector<int> readers;
  for (int i = first_backward; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    if (std::find(op.control_input().begin(), op.control_input().end(), blob) !=
        op.control_input().end()) {
      return {};
    }
    if (Reads(op, blob)) readers.push_back(i);
  }
  return readers;
}

void Rename(NetDef* net, const std::vector<int>& readers, const std::string& from,
            const std::string& to) {
  for (int i : readers) {
    for (std::string& input : *net->mutable_op(i)->mutable_input()) {
      if (input == from) input = to;
    }
  }
}

// The backward ops reading the output of the Conv at `c`, when the Conv meets the conditions of
// the header that do not depend on the insertion point; empty otherwise.
std::vector<int> RecomputableConvReaders(const NetDef& net, int c, int first_backward) {
  const OperatorDef& conv = net.op(c);
  if (conv.type() != "Conv" || conv.output_size() != 1 || HasFusedEpilogue(conv)) return {};
  const std::string& x = conv.output(0);
  if (Reads(conv, x) || WrittenIn(net, 0, net.op_size(), x, {c})) return {};
  return BackwardReaders(net, first_backward, x);
}

// Recomputes the output of the forward Conv at `c` before its first backward reader, if it
// qualifies; true when it did.
bool RewriteConv(NetDef* net, int c, int first_backward) {
  const std::vector<int> readers = RecomputableConvReaders(*net, c, first_backward);
  if (readers.empty()) return false;
  const OperatorDef& conv = net->op(c);
  const std::string x = conv.output(0);
  const int at = readers.front();
  for (const std::string& blob : conv.input()) {
    if (WrittenIn(*net, c + 1, at, blob)) return false;
  }
  const std::string after = BackwardInputOf(*net, at, first_backward);
  if (after.empty()) return false;  // a dag executor could run it early: no saving
  OperatorDef again = conv;
  const std::string recomputed = UniqueName(*net, x + "_recomputed");
  again.set_output(0, recomputed);
  if (!conv.name().empty()) again.set_name(conv.name() + "_recompute");
  again.clear_control_input();
  again.add_control_input(after);
  Rename(net, readers, x, recomputed);
  InsertOp(net, at, std::move(again));
  return true;
}

// Rewrites the pattern at `bn` if it qualifies; true when it did.
bool Rewrite(NetDef* net, int bn, int first_backward) {
  Pattern p;
  if (!FindPattern(*net, bn, first_backward, &p)) return false;
  const std::vector<int> readers = BackwardReaders(*net, first_backward, p.r);
  if (readers.empty() || WrittenIn(*net, 0, net->op_size(), p.r, p.ops)) return false;
  const OperatorDef& bn_op = net->op(bn);
  const int at = readers.front();
  std::vector<std::string> kept = {bn_op.input(0), bn_op.input(1), bn_op.input(2),
                                   bn_op.output(3), bn_op.output(4)};
  if (!p.residual.empty()) kept.push_back(p.residual);
  for (const std::string& blob : kept) {
    if (WrittenIn(*net, bn + 1, at, blob)) return false;
  }
  const std::string recomputed = UniqueName(*net, p.r + "_recomputed");
  const std::string after = BackwardInputOf(*net, at, first_backward);
  if (after.empty()) return false;  // a dag executor could run it early: no saving
  Rename(net, readers, p.r, recomputed);
  InsertOp(net, at, ApplyOp(bn_op, p.residual, after, recomputed));
  return true;
}

}  // namespace

RecomputeCount RecomputeInBackward(NetDef* net, int first_backward_op,
                                   const RecomputeOptions& options) {
  // Last first, so that a recomputation reading an earlier op's output (a residual, a recomputed
  // Conv's input) is a backward reader of it by the time that op is rewritten: the chain is
  // recomputed too.
  RecomputeCount count;
  for (int i = first_backward_op - 1; i >= 0; --i) {
    if (options.bn_relu && Rewrite(net, i, first_backward_op)) {
      ++count.bn_relu;
    } else if (net->op(i).output_size() == 1 &&
               options.conv_outputs.count(net->op(i).output(0)) != 0 &&
               RewriteConv(net, i, first_backward_op)) {
      ++count.convs;
    }
  }
  return count;
}

std::vector<std::string> RecomputableConvs(const NetDef& net, int first_backward_op,
                                           const std::map<std::string, ShapeInfo>& shapes) {
  struct Candidate {
    int64_t macs_per_output;
    int op;
    std::string output;
  };
  std::vector<Candidate> candidates;
  for (int i = 0; i < first_backward_op; ++i) {
    const OperatorDef& op = net.op(i);
    if (op.type() != "Conv" || op.input_size() < 2) continue;
    const auto filter = shapes.find(op.input(1));
    if (filter == shapes.end() || !filter->second.known || filter->second.dims.size() != 4 ||
        RecomputableConvReaders(net, i, first_backward_op).empty()) {
      continue;
    }
    const std::vector<int64_t>& w = filter->second.dims;
    candidates.push_back({w[1] * w[2] * w[3], i, op.output(0)});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     return a.macs_per_output < b.macs_per_output;
                   });
  std::vector<std::string> outputs;
  for (const Candidate& c : candidates) outputs.push_back(c.output);
  return outputs;
}

}  // namespace braid
