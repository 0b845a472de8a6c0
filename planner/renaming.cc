#include "planner/renaming.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "planner/blob_lifetimes.h"
#include "planner/dataflow.h"
#include "planner/op_seed.h"

namespace braid {
namespace {

struct Chain {
  int last;  // the chain's latest blob
  int device;
  int64_t bytes;  // its largest blob
  std::vector<int> members;
};

bool MayFollow(const BlobLifetimes& lifetimes, const std::set<std::pair<int, int>>& inplace, int a,
               int b) {
  return lifetimes.Precedes(a, b) || inplace.count({a, b});
}

// The chain b fits best: the smallest chain at least b's size, else the largest one; -1 if none.
int BestChain(const BlobLifetimes& lifetimes, const std::set<std::pair<int, int>>& inplace,
              const std::vector<Chain>& chains, int b) {
  const BlobLifetime& blob = lifetimes.blobs()[b];
  int best = -1;
  auto better = [&](const Chain& c, const Chain& incumbent) {
    const bool fits = c.bytes >= blob.bytes, incumbent_fits = incumbent.bytes >= blob.bytes;
    if (fits != incumbent_fits) return fits;
    return fits ? c.bytes < incumbent.bytes : c.bytes > incumbent.bytes;
  };
  for (int c = 0; c < static_cast<int>(chains.size()); ++c) {
    if (chains[c].device != blob.device || !MayFollow(lifetimes, inplace, chains[c].last, b)) {
      continue;
    }
    if (best < 0 || better(chains[c], chains[best])) best = c;
  }
  return best;
}

void Rename(google::protobuf::RepeatedPtrField<std::string>* names,
            const std::map<std::string, std::string>& renamed) {
  for (std::string& name : *names) {
    auto it = renamed.find(name);
    if (it != renamed.end()) name = it->second;
  }
}

}  // namespace

NetDef RenameSharedBlobs(const NetDef& net, const PlanRequest& request) {
  PlanRequest dag_request = request;
  dag_request.executor = PlanExecutor::kDag;
  BlobLifetimes lifetimes(net, dag_request);
  std::set<std::pair<int, int>> inplace(lifetimes.inplace().begin(), lifetimes.inplace().end());
  std::vector<Chain> chains;
  for (int b = 0; b < lifetimes.num_blobs(); ++b) {
    const BlobLifetime& blob = lifetimes.blobs()[b];
    const int c = BestChain(lifetimes, inplace, chains, b);
    if (c < 0) {
      chains.push_back({b, blob.device, blob.bytes, {b}});
      continue;
    }
    chains[c].last = b;
    chains[c].bytes = std::max(chains[c].bytes, blob.bytes);
    chains[c].members.push_back(b);
  }
  std::map<std::string, std::string> renamed;
  const std::set<std::string> taken = BlobNamesIn(net);
  int shared = 0;
  for (const Chain& chain : chains) {
    if (chain.members.size() < 2) continue;
    std::string name;
    do {
      name = "__m" + std::to_string(shared++) + "_shared";
    } while (taken.count(name));
    for (int b : chain.members) renamed[lifetimes.blobs()[b].name] = name;
  }
  NetDef out = net;
  for (OperatorDef& op : *out.mutable_op()) {
    // The default seed hashes the first output's name: keep the op's random stream.
    if (op.output_size() > 0 && renamed.count(op.output(0)) && !HasExplicitSeed(op)) {
      Argument* seed = op.add_arg();
      seed->set_name("seed");
      seed->set_i(static_cast<int64_t>(OpSeed(op)));
    }
    Rename(op.mutable_input(), renamed);
    Rename(op.mutable_output(), renamed);
    Rename(op.mutable_control_input(), renamed);
  }
  return out;
}

}  // namespace braid
