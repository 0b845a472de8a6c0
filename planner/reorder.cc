#include "planner/reorder.h"

#include <vector>

#include "planner/blob_lifetimes.h"
#include "planner/dataflow.h"

namespace braid {
namespace {

// Per op: the recyclable blobs it touches, and bytes for each.
struct OpBlobs {
  std::vector<std::vector<int>> touched;
  std::vector<int64_t> bytes;
  std::vector<int> touches_left;  // per blob, decremented as its ops run
};

OpBlobs CollectOpBlobs(const BlobLifetimes& lifetimes, int num_ops) {
  OpBlobs ob;
  ob.touched.resize(num_ops);
  for (int b = 0; b < lifetimes.num_blobs(); ++b) {
    const BlobLifetime& blob = lifetimes.blobs()[b];
    ob.bytes.push_back(blob.bytes);
    ob.touches_left.push_back(static_cast<int>(blob.touches.size()));
    for (int op : blob.touches) ob.touched[op].push_back(b);
  }
  return ob;
}

// Live bytes op `op` adds: blobs it touches first, minus blobs it touches last.
int64_t Growth(const OpBlobs& ob, const std::vector<bool>& born, int op) {
  int64_t growth = 0;
  for (int b : ob.touched[op]) {
    if (!born[b]) growth += ob.bytes[b];
    if (ob.touches_left[b] == 1) growth -= ob.bytes[b];
  }
  return growth;
}

std::vector<int> GreedyOrder(const NetDef& net, const BlobLifetimes& lifetimes) {
  const int n = net.op_size();
  DataflowGraph g = BuildDataflow(net);
  OpBlobs ob = CollectOpBlobs(lifetimes, n);
  std::vector<bool> born(lifetimes.num_blobs(), false);
  std::vector<int> waiting(n), ready, order;
  for (int j = 0; j < n; ++j) {
    waiting[j] = static_cast<int>(g.parents[j].size());
    if (waiting[j] == 0) ready.push_back(j);
  }
  while (!ready.empty()) {
    size_t pick = 0;
    int64_t best = Growth(ob, born, ready[0]);
    for (size_t r = 1; r < ready.size(); ++r) {
      const int64_t growth = Growth(ob, born, ready[r]);
      if (growth < best || (growth == best && ready[r] < ready[pick])) {
        best = growth;
        pick = r;
      }
    }
    const int op = ready[pick];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
    order.push_back(op);
    for (int b : ob.touched[op]) {
      born[b] = true;
      --ob.touches_left[b];
    }
    for (int c : g.children[op]) {
      if (--waiting[c] == 0) ready.push_back(c);
    }
  }
  return order;
}

}  // namespace

NetDef ReorderForMemory(const NetDef& net, const PlanRequest& request) {
  PlanRequest simple = request;
  simple.executor = PlanExecutor::kSimple;
  BlobLifetimes lifetimes(net, simple);
  NetDef reordered = net;
  reordered.clear_op();
  std::vector<std::vector<std::pair<int, int>>> inplace;
  for (int op : GreedyOrder(net, lifetimes)) {
    *reordered.add_op() = net.op(op);
    const bool known = op < static_cast<int>(request.inplace.size());
    inplace.push_back(known ? request.inplace[op] : std::vector<std::pair<int, int>>{});
  }
  PlanRequest reordered_request = simple;
  reordered_request.inplace = std::move(inplace);
  const bool smaller = PlanMemory(reordered, reordered_request).arena_bytes() <
                       PlanMemory(net, simple).arena_bytes();
  return smaller ? reordered : net;
}

}  // namespace braid
