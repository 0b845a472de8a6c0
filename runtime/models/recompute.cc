#include "runtime/models/recompute.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "planner/dataflow.h"
#include "runtime/argument.h"

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

// Rewrites the pattern at `bn` if it qualifies; true when it did.
bool Rewrite(NetDef* net, int bn, int first_backward) {
  Pattern p;
  if (!FindPattern(*net, bn, first_backward, &p)) return false;
  std::vector<int> readers;  // backward readers of R
  for (int i = first_backward; i < net->op_size(); ++i) {
    if (Reads(net->op(i), p.r)) readers.push_back(i);
  }
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
  for (int i : readers) {
    for (std::string& input : *net->mutable_op(i)->mutable_input()) {
      if (input == p.r) input = recomputed;
    }
  }
  InsertOp(net, at, ApplyOp(bn_op, p.residual, after, recomputed));
  return true;
}

}  // namespace

int RecomputeBnReluInBackward(NetDef* net, int first_backward_op) {
  // Last first, so that a recomputation reading an earlier pattern's output (a residual) is a
  // backward reader of it by the time that pattern is rewritten: the chain is recomputed too.
  int rewritten = 0;
  for (int bn = first_backward_op - 1; bn >= 0; --bn) {
    if (Rewrite(net, bn, first_backward_op)) ++rewritten;
  }
  return rewritten;
}

}  // namespace braid
