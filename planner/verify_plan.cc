#include "planner/verify_plan.h"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "planner/dataflow.h"
#include "planner/op_seed.h"

namespace braid {
namespace {

// Strict happens-before between ops, one row of bits per op.
class OpOrder {
 public:
  explicit OpOrder(int n) : n_(n), words_((n + 63) / 64), rows_(n * words_, 0) {}

  bool Before(int i, int j) const { return (rows_[i * words_ + (j >> 6)] >> (j & 63)) & 1; }
  void Set(int i, int j) { rows_[i * words_ + (j >> 6)] |= uint64_t{1} << (j & 63); }
  int size() const { return n_; }

 private:
  int n_;
  size_t words_;
  std::vector<uint64_t> rows_;
};

// Reachability in BuildDataflow's DAG, by a depth-first search from every op.
OpOrder DataflowOrder(const NetDef& net) {
  const DataflowGraph g = BuildDataflow(net);
  OpOrder order(g.num_ops());
  std::vector<int> stack;
  for (int start = 0; start < g.num_ops(); ++start) {
    stack.assign(g.children[start].begin(), g.children[start].end());
    while (!stack.empty()) {
      const int op = stack.back();
      stack.pop_back();
      if (order.Before(start, op)) continue;
      order.Set(start, op);
      for (int child : g.children[op]) {
        if (!order.Before(start, child)) stack.push_back(child);
      }
    }
  }
  return order;
}

OpOrder ListedOrder(int n) {
  OpOrder order(n);
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) order.Set(i, j);
  }
  return order;
}

std::string NetLabel(const NetDef& net) {
  return net.name().empty() ? "net <unnamed>" : "net '" + net.name() + "'";
}

std::string OpLabel(const NetDef& net, int k) {
  const OperatorDef& op = net.op(k);
  std::string label = "op " + std::to_string(k) + " (" + op.type();
  if (!op.name().empty()) label += " '" + op.name() + "'";
  return label + ")";
}

// How the net touches one blob, in listed order.
struct BlobUse {
  std::vector<int> writes;   // ascending, each op once
  std::vector<int> touches;  // reads or writes, ascending, each op once
  bool read_first = false;
};

void AppendOnce(std::vector<int>* ops, int k) {
  if (ops->empty() || ops->back() != k) ops->push_back(k);
}

std::map<std::string, BlobUse> BlobUses(const NetDef& net) {
  std::map<std::string, BlobUse> uses;
  for (int k = 0; k < net.op_size(); ++k) {
    for (const auto* reads : {&net.op(k).input(), &net.op(k).control_input()}) {
      for (const std::string& in : *reads) {  // a control input keeps its blob alive like a read
        BlobUse& use = uses[in];
        if (use.touches.empty()) use.read_first = true;
        AppendOnce(&use.touches, k);
      }
    }
    for (const std::string& out : net.op(k).output()) {
      AppendOnce(&uses[out].touches, k);
      AppendOnce(&uses[out].writes, k);
    }
  }
  return uses;
}

bool Contains(const google::protobuf::RepeatedPtrField<std::string>& names, const std::string& s) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

// Empty when `blob` may be recycled under memory_plan.h's rules, else why not.
std::string WhyNotRecyclable(const NetDef& net, const PlanRequest& request,
                             const std::map<std::string, BlobUse>& uses, const std::string& blob) {
  auto use = uses.find(blob);
  if (use == uses.end() || use->second.writes.empty()) return "is never written by the net";
  if (use->second.read_first) return "is read before it is written (it carries state)";
  if (Contains(net.external_input(), blob)) return "is an external input";
  if (Contains(net.external_output(), blob)) return "is an external output";
  if (request.keep.count(blob)) return "is in the request's keep set";
  if (!request.blob_bytes.count(blob)) return "has no size in the request";
  const auto gradient = request.gradients.find(blob);
  if (gradient != request.gradients.end() && !request.share_parameter_gradients) {
    auto param = uses.find(gradient->second);
    if (param != uses.end() && param->second.read_first) return "is a parameter's gradient";
  }
  if (request.mode == PlanMode::kTraining && !request.share_activations &&
      gradient == request.gradients.end()) {
    return "is an activation, and training mode without share_activations recycles gradients only";
  }
  return "";
}

struct Placed {
  std::string blob;
  int64_t offset = 0;
  int64_t bytes = 0;
  int arena = 0;
};

std::string PlacementLabel(const Placed& p) {
  std::ostringstream out;
  out << "'" << p.blob << "' [" << p.offset << ", " << p.offset + p.bytes << ") in arena "
      << p.arena;
  return out.str();
}

// Checks of one placement that need no other placement.
std::string CheckPlacement(const NetDef& net, const PlanRequest& request,
                           const std::map<std::string, BlobUse>& uses, const ArenaPlan& arena,
                           const Placed& p) {
  const std::string where = NetLabel(net) + ": blob " + PlacementLabel(p);
  const std::string why = WhyNotRecyclable(net, request, uses, p.blob);
  if (!why.empty()) return where + " is placed but " + why;
  if (p.offset < 0 || p.bytes < 0) return where + " has a negative offset or size";
  if (p.offset % request.alignment != 0) {
    return where + " is not aligned to " + std::to_string(request.alignment) + " bytes";
  }
  if (p.offset + p.bytes > arena.arena_bytes) {
    return where + " ends past the arena's " + std::to_string(arena.arena_bytes) + " bytes";
  }
  const int64_t size = request.blob_bytes.at(p.blob);
  if (p.bytes < size) {
    return where + " is smaller than its size " + std::to_string(size) + " bytes";
  }
  const int writer = uses.at(p.blob).writes.front();
  const DeviceOption device = BlobDevice(net, request, p.blob, writer);
  if (device.device_type() != arena.device.device_type() ||
      device.device_id() != arena.device.device_id()) {
    return where + " (device " + std::to_string(arena.device.device_type()) + ":" +
           std::to_string(arena.device.device_id()) + ") but it lives on device " +
           std::to_string(device.device_type()) + ":" + std::to_string(device.device_id()) +
           " (its first writer is " + OpLabel(net, writer) + ")";
  }
  return "";
}

// The first (toucher of a, writer of b) pair not ordered by `order`; none when a dies before b.
std::optional<std::pair<int, int>> Unordered(const OpOrder& order, const BlobUse& a,
                                             const BlobUse& b) {
  for (int t : a.touches) {
    for (int w : b.writes) {
      if (!order.Before(t, w)) return std::make_pair(t, w);
    }
  }
  return std::nullopt;
}

bool SchemaAllowsPair(const PlanRequest& request, int k, int i, int o) {
  if (k >= static_cast<int>(request.inplace.size())) return false;
  const auto& pairs = request.inplace[k];
  return std::find(pairs.begin(), pairs.end(), std::make_pair(i, o)) != pairs.end();
}

// True when some op reads `in` and writes `out` into its memory as memory_plan.h allows.
bool DiesInPlace(const NetDef& net, const PlanRequest& request, const OpOrder& order,
                 const std::map<std::string, BlobUse>& uses, const std::string& in,
                 const std::string& out) {
  const BlobUse& in_use = uses.at(in);
  const BlobUse& out_use = uses.at(out);
  const auto in_size = request.blob_bytes.find(in), out_size = request.blob_bytes.find(out);
  if (in_size == request.blob_bytes.end() || out_size == request.blob_bytes.end() ||
      in_size->second != out_size->second) {
    return false;  // in place only between blobs of one size
  }
  for (int k = 0; k < net.op_size(); ++k) {
    const OperatorDef& op = net.op(k);
    if (std::count(op.input().begin(), op.input().end(), in) != 1) continue;
    if (Contains(op.output(), in) || Contains(op.input(), out)) continue;
    const int i =
        static_cast<int>(std::find(op.input().begin(), op.input().end(), in) - op.input().begin());
    bool allowed = false;
    for (int o = 0; o < op.output_size(); ++o) {
      allowed = allowed || (op.output(o) == out && SchemaAllowsPair(request, k, i, o));
    }
    if (!allowed) continue;
    bool ordered = true;
    for (int t : in_use.touches) ordered = ordered && (t == k || order.Before(t, k));
    for (int u : out_use.touches) ordered = ordered && (u == k || order.Before(k, u));
    if (ordered) return true;
  }
  return false;
}

std::string CheckPair(const NetDef& net, const PlanRequest& request, const OpOrder& order,
                      const std::map<std::string, BlobUse>& uses, const Placed& a,
                      const Placed& b) {
  const auto a_first = Unordered(order, uses.at(a.blob), uses.at(b.blob));
  if (!a_first) return "";
  const auto b_first = Unordered(order, uses.at(b.blob), uses.at(a.blob));
  if (!b_first) return "";
  if (a.offset == b.offset && (DiesInPlace(net, request, order, uses, a.blob, b.blob) ||
                               DiesInPlace(net, request, order, uses, b.blob, a.blob))) {
    return "";
  }
  return NetLabel(net) + ": blobs " + PlacementLabel(a) + " and " + PlacementLabel(b) +
         " share bytes, but " + OpLabel(net, a_first->first) + " touching '" + a.blob +
         "' does not happen before " + OpLabel(net, a_first->second) + " writing '" + b.blob +
         "', " + OpLabel(net, b_first->first) + " touching '" + b.blob +
         "' does not happen before " + OpLabel(net, b_first->second) + " writing '" + a.blob +
         "', and neither dies in place into the other at one offset";
}

// Every pair of byte-overlapping placements within one arena, found by a sweep over offsets.
std::string CheckOverlaps(const NetDef& net, const PlanRequest& request, const OpOrder& order,
                          const std::map<std::string, BlobUse>& uses, std::vector<Placed> arena) {
  std::stable_sort(arena.begin(), arena.end(),
                   [](const Placed& x, const Placed& y) { return x.offset < y.offset; });
  for (size_t i = 0; i < arena.size(); ++i) {
    if (arena[i].bytes == 0) continue;
    for (size_t j = i + 1; j < arena.size(); ++j) {
      if (arena[j].offset >= arena[i].offset + arena[i].bytes) break;
      if (arena[j].bytes == 0) continue;
      std::string error = CheckPair(net, request, order, uses, arena[i], arena[j]);
      if (!error.empty()) return error;
    }
  }
  return "";
}

// Operator fields a renaming must keep: everything but blob names.
std::string CompareOpFields(const NetDef& original, const NetDef& renamed, int k) {
  using google::protobuf::util::MessageDifferencer;
  const OperatorDef& x = original.op(k);
  const OperatorDef& y = renamed.op(k);
  const std::string where = NetLabel(original) + ": renamed " + OpLabel(renamed, k) + " ";
  if (x.type() != y.type() || x.engine() != y.engine()) return where + "changes type or engine";
  if (x.input_size() != y.input_size() || x.output_size() != y.output_size() ||
      x.control_input_size() != y.control_input_size()) {
    return where + "changes the number of inputs, outputs or control inputs";
  }
  // Arguments must match, except that a renaming may pin the seed (planner/op_seed.h).
  std::vector<const Argument*> xs, ys;
  for (const Argument& a : x.arg())
    if (a.name() != "seed") xs.push_back(&a);
  for (const Argument& a : y.arg())
    if (a.name() != "seed") ys.push_back(&a);
  bool same_args = xs.size() == ys.size();
  for (size_t a = 0; same_args && a < xs.size(); ++a) {
    same_args = MessageDifferencer::Equals(*xs[a], *ys[a]);
  }
  if (!same_args) return where + "changes its arguments";
  if (x.has_device_option() != y.has_device_option() ||
      !MessageDifferencer::Equals(x.device_option(), y.device_option())) {
    return where + "changes its device option";
  }
  return "";
}

// Every op keeps its random stream (planner/op_seed.h): renaming a first output changes the default
// seed unless the renaming pinned it.
std::string CompareSeeds(const NetDef& original, const NetDef& renamed) {
  for (int k = 0; k < original.op_size(); ++k) {
    if (OpSeed(original.op(k)) != OpSeed(renamed.op(k))) {
      return NetLabel(original) + ": renamed " + OpLabel(renamed, k) +
             " changes its default random seed (a hash of its first output's name); pin it with "
             "a `seed` argument";
    }
  }
  return "";
}

// What one read sees: the (op, output slot) that last wrote the name before it, or op -1.
struct Producer {
  int op = -1;
  int slot = -1;
  bool operator==(const Producer&) const = default;
};

// producers[k]: one per input of op k, then one per control input.
std::vector<std::vector<Producer>> Producers(const NetDef& net) {
  std::map<std::string, Producer> last;
  std::vector<std::vector<Producer>> producers(net.op_size());
  for (int k = 0; k < net.op_size(); ++k) {
    const OperatorDef& op = net.op(k);
    for (const std::string& in : op.input()) producers[k].push_back(last[in]);
    for (const std::string& ctl : op.control_input()) producers[k].push_back(last[ctl]);
    for (int o = 0; o < op.output_size(); ++o) last[op.output(o)] = {k, o};
  }
  return producers;
}

std::string ReadName(const OperatorDef& op, int r) {
  return r < op.input_size() ? op.input(r) : op.control_input(r - op.input_size());
}

std::string CompareProducers(const NetDef& original, const NetDef& renamed) {
  const auto x = Producers(original);
  const auto y = Producers(renamed);
  for (int k = 0; k < original.op_size(); ++k) {
    for (size_t r = 0; r < x[k].size(); ++r) {
      const std::string before = ReadName(original.op(k), static_cast<int>(r));
      const std::string after = ReadName(renamed.op(k), static_cast<int>(r));
      const bool external = x[k][r].op < 0 && y[k][r].op < 0;
      if (x[k][r] == y[k][r] && (!external || before == after)) continue;
      auto describe = [](const NetDef& net, Producer p) {
        return p.op < 0 ? std::string("the net's input")
                        : OpLabel(net, p.op) + " output " + std::to_string(p.slot);
      };
      return NetLabel(original) + ": " + OpLabel(original, k) + " read " + std::to_string(r) +
             " sees '" + before + "' from " + describe(original, x[k][r]) +
             ", but renamed it sees '" + after + "' from " + describe(renamed, y[k][r]);
    }
  }
  return "";
}

// (op, output slot) pairs writing `blob`.
std::set<std::pair<int, int>> WritePositions(const NetDef& net, const std::string& blob) {
  std::set<std::pair<int, int>> positions;
  for (int k = 0; k < net.op_size(); ++k) {
    for (int o = 0; o < net.op(k).output_size(); ++o) {
      if (net.op(k).output(o) == blob) positions.emplace(k, o);
    }
  }
  return positions;
}

// Blobs outliving a run (external, or read before written) must be written exactly as before;
// this also keeps each external output's final writer.
std::string CompareStateWrites(const NetDef& original, const NetDef& renamed) {
  std::set<std::string> state(original.external_input().begin(), original.external_input().end());
  state.insert(original.external_output().begin(), original.external_output().end());
  for (const auto& [name, use] : BlobUses(original)) {
    if (use.read_first) state.insert(name);
  }
  for (const std::string& blob : state) {
    if (WritePositions(original, blob) != WritePositions(renamed, blob)) {
      return NetLabel(original) + ": blob '" + blob +
             "' outlives a run (external, or read before written) but the renamed net writes it "
             "at different op outputs";
    }
  }
  return "";
}

std::string CompareOrders(const NetDef& original, const NetDef& renamed) {
  const OpOrder x = DataflowOrder(original);
  const OpOrder y = DataflowOrder(renamed);
  for (int i = 0; i < x.size(); ++i) {
    for (int j = i + 1; j < x.size(); ++j) {
      if (x.Before(i, j) == y.Before(i, j)) continue;
      return NetLabel(original) + ": " + OpLabel(original, i) + " happens before " +
             OpLabel(original, j) +
             (x.Before(i, j) ? " in the original but not renamed"
                             : " in the renamed net but not the original");
    }
  }
  return "";
}

}  // namespace

std::string VerifyMemoryPlan(const NetDef& net, const PlanRequest& request,
                             const MemoryPlan& plan) {
  if (request.alignment <= 0) return NetLabel(net) + ": the request's alignment is not positive";
  const std::map<std::string, BlobUse> uses = BlobUses(net);
  const OpOrder order =
      request.executor == PlanExecutor::kDag ? DataflowOrder(net) : ListedOrder(net.op_size());
  std::set<std::string> placed_once;
  for (size_t a = 0; a < plan.arenas.size(); ++a) {
    const ArenaPlan& arena = plan.arenas[a];
    std::vector<Placed> placed;
    for (const BlobOffset& b : arena.blobs) {
      placed.push_back({b.blob, b.offset, b.bytes, static_cast<int>(a)});
      if (!placed_once.insert(b.blob).second) {
        return NetLabel(net) + ": blob '" + b.blob + "' is placed more than once";
      }
      std::string error = CheckPlacement(net, request, uses, arena, placed.back());
      if (!error.empty()) return error;
    }
    std::string error = CheckOverlaps(net, request, order, uses, std::move(placed));
    if (!error.empty()) return error;
  }
  return "";
}

std::string VerifyRenamedNet(const NetDef& original, const NetDef& renamed) {
  const std::string where = NetLabel(original) + ": ";
  if (original.op_size() != renamed.op_size()) return where + "the renamed net has other ops";
  if (!std::equal(original.external_input().begin(), original.external_input().end(),
                  renamed.external_input().begin(), renamed.external_input().end()) ||
      !std::equal(original.external_output().begin(), original.external_output().end(),
                  renamed.external_output().begin(), renamed.external_output().end())) {
    return where + "the renamed net changes the external inputs or outputs";
  }
  if (!google::protobuf::util::MessageDifferencer::Equals(original.device_option(),
                                                          renamed.device_option())) {
    return where + "the renamed net changes the net's device option";
  }
  for (int k = 0; k < original.op_size(); ++k) {
    std::string error = CompareOpFields(original, renamed, k);
    if (!error.empty()) return error;
  }
  for (auto compare : {CompareProducers, CompareStateWrites, CompareOrders, CompareSeeds}) {
    std::string error = compare(original, renamed);
    if (!error.empty()) return error;
  }
  return "";
}

}  // namespace braid
