#include "runtime/exec/process_collective_order.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

#include "planner/fnv1a.h"
#include "runtime/core/argument.h"
#include "runtime/core/device.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

bool WaitsForOtherProcesses(const OperatorDef& op) {
  const OpSchema* schema = FindSchema(op.type());
  return schema != nullptr && schema->waits_for_other_processes();
}

std::string OpName(const OperatorDef& op) {
  return !op.name().empty() ? op.name() : op.output_size() > 0 ? op.output(0) : "";
}

// What every rank must agree on for collective `op`: its type and the effective values of the
// arguments that must match across ranks (ProcessAllreduce's defaults filled in). On a cuda device
// the replicas too (NCCL's communicator needs as many on every rank; a rank 0 with other counts
// would wait in it for ever), and with `average` the weight: NCCL's mean counts every replica
// alike, the weighted mean only when every rank has the same weight
// (ops/collective/process_allreduce_op.h).
std::string Signature(const OperatorDef& op) {
  const ArgumentReader args(op.arg());
  const int64_t tag = args.Get<int64_t>(
      "tag", DefaultCollectiveTag(op.output_size() > 0 ? op.output(0) : std::string()));
  const int64_t tensors = args.Get<int64_t>("tensors", 1);
  std::string signature = op.type() + " tag " + std::to_string(tag) + " tensors " +
                          std::to_string(tensors) + " algorithm " +
                          args.Get<std::string>("algorithm", "ring") + " average " +
                          std::to_string(args.Get<int64_t>("average", 0));
  if (op.device_option().device_type() == static_cast<int>(DeviceType::kCuda)) {
    const int64_t replicas = tensors > 0 ? op.input_size() / tensors : 0;
    signature += " replicas " + std::to_string(replicas);
    if (args.Get<int64_t>("average", 0) != 0) {
      signature += " weight " + std::to_string(args.Get<int64_t>("weight", replicas));
    }
  }
  return signature;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Whether every rank's 64-bit `fingerprint` is this rank's: one all-reduce on `tag` of its 16
// nibbles c and their squares; they agree exactly when, for each nibble, world x the sum of squares
// equals the square of the sum (Cauchy-Schwarz). The sums stay exact in float up to
// kMaxFingerprintRanks ranks (225 x 65536 < 2^24).
constexpr int kMaxFingerprintRanks = 65536;
Status SameOnEveryRank(ProcessGroup* group, uint64_t fingerprint, uint32_t tag, bool* same) {
  constexpr int kNibbles = 16;
  float sums[2 * kNibbles];
  for (int k = 0; k < kNibbles; ++k) {
    const float c = static_cast<float>((fingerprint >> (4 * k)) & 15);
    sums[k] = c;
    sums[kNibbles + k] = c * c;
  }
  Status s = group->AllreduceSum(sums, 2 * kNibbles, tag, AllreduceAlgorithm::kRing);
  if (!s.ok()) return s;
  const double world = group->size();
  *same = true;
  for (int k = 0; k < kNibbles; ++k) {
    *same &= world * sums[kNibbles + k] == static_cast<double>(sums[k]) * sums[k];
  }
  return Status::OK();
}

// The first difference between this rank's list and another rank's, or "" when they all agree.
// Each list's first line is its net's name.
std::string FirstDifference(const std::vector<std::string>& every,
                            const std::vector<std::string>& own, const NetDef& net,
                            const std::vector<int>& positions) {
  for (size_t r = 0; r < every.size(); ++r) {
    const std::vector<std::string> theirs = Lines(every[r]);
    if (theirs == own) continue;
    if (theirs.empty() || theirs[0] != own[0]) {
      return "rank " + std::to_string(r) + " checked " +
             (theirs.empty() ? std::string("nothing") : theirs[0]) + " at the same time (ranks " +
             "first ran their nets of one name in different orders)";
    }
    size_t k = 1;
    while (k < own.size() && k < theirs.size() && own[k] == theirs[k]) ++k;
    const auto describe = [](const std::vector<std::string>& list, size_t at) {
      return at < list.size() ? list[at] : "none (it has " + std::to_string(list.size() - 1) + ")";
    };
    const int op = k - 1 < positions.size() ? positions[k - 1] : -1;
    return "collective " + std::to_string(k - 1) + " (in net order) is " + describe(own, k) +
           (op >= 0 ? " (op " + std::to_string(op) + " '" + OpName(net.op(op)) + "')" : "") +
           " here and " + describe(theirs, k) + " on rank " + std::to_string(r);
  }
  return "";
}

// What the checks on one (group, tag) share in this process: their order (names that share a tag
// share it too, so that a tag never carries two all-reduces at once) and the numbers of the store
// keys they gathered under.
struct TagChecks {
  std::mutex mu;         // held through a check
  uint64_t gathers = 0;  // guarded by mu
};

TagChecks& ChecksOn(uint64_t group_id, uint32_t tag) {
  static std::mutex mu;
  static auto* checks = new std::map<std::pair<uint64_t, uint32_t>,
                                     std::unique_ptr<TagChecks>>;  // guarded by mu; never freed
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<TagChecks>& entry = (*checks)[{group_id, tag}];
  if (entry == nullptr) entry = std::make_unique<TagChecks>();
  return *entry;
}

}  // namespace

uint32_t DefaultCollectiveTag(const std::string& output) {
  const uint32_t hash = Fnv1a32(output);
  return hash >= kFirstReservedTag ? hash - kFirstReservedTag : hash;
}

void OrderProcessCollectives(NetDef* net) {
  int previous = -1;  // the last collective so far, in net order
  for (int i = 0; i < net->op_size(); ++i) {
    if (!WaitsForOtherProcesses(net->op(i))) continue;
    if (net->op(i).output_size() == 0) continue;  // validation refuses it
    if (previous >= 0) {
      const std::string earlier = net->op(previous).output(0);
      OperatorDef* op = net->mutable_op(i);
      if (std::find(op->control_input().begin(), op->control_input().end(), earlier) ==
          op->control_input().end()) {
        op->add_control_input(earlier);
      }
    }
    previous = i;
  }
}

Status CheckProcessCollectiveOrder(const NetDef& net, ProcessGroup* group) {
  if (group == nullptr || group->size() == 1) return Status::OK();
  const std::string label = "net '" + net.name() + "' on rank " + std::to_string(group->rank());
  std::vector<std::string> own = {"net '" + net.name() + "'"};  // then one line per collective
  std::vector<int> positions;  // each collective's op index
  Status read = StatusFromCall([&] {  // the ops' constructors checked these arguments already
    for (int i = 0; i < net.op_size(); ++i) {
      if (!WaitsForOtherProcesses(net.op(i))) continue;
      own.push_back(Signature(net.op(i)));
      positions.push_back(i);
    }
  });
  if (!read.ok()) return Status(read.code(), label + ": " + read.message());
  if (positions.empty()) return Status::OK();
  std::string mine;  // what is hashed and gathered
  for (const std::string& line : own) mine += line + "\n";
  const uint32_t tag = kFirstReservedTag + (Fnv1a32(net.name()) & 0xFFFFu);
  TagChecks& checks = ChecksOn(group->id(), tag);
  std::lock_guard<std::mutex> lock(checks.mu);
  bool same = false;  // past kMaxFingerprintRanks the lists themselves are compared
  Status s = group->size() <= kMaxFingerprintRanks
                 ? SameOnEveryRank(group, Fnv1a64(mine), tag, &same)
                 : Status::OK();
  if (s.ok() && same) return s;
  std::vector<std::string> every;
  if (s.ok()) {  // every rank saw the same all-reduce's result: each is here
    s = group->GatherFromEveryRank(
        "collective_order/" + std::to_string(tag) + "/" + std::to_string(checks.gathers++), mine,
        &every);
  }
  if (!s.ok()) {
    return Status(s.code(), label + ": comparing the order of its cross-process collectives: " +
                                s.message());
  }
  const std::string difference = FirstDifference(every, own, net, positions);
  if (difference.empty()) return Status::OK();
  return Status::FailedPrecondition(
      label + ": the ranks list their cross-process collectives differently, so each would wait " +
      "in another one until the group's timeout: " + difference +
      "; every rank must run the same collectives, with the same tags, in the same order");
}

}  // namespace braid
