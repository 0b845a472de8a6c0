#include "planner/blob_lifetimes.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "planner/dataflow.h"

namespace braid {
namespace {

struct BlobAccesses {
  bool read_first = false;  // the first access in listed order is a read
  std::vector<int> writes, touches;
};

void AddOnce(std::vector<int>* ops, int op) {
  if (ops->empty() || ops->back() != op) ops->push_back(op);
}

std::map<std::string, BlobAccesses> CollectAccesses(const NetDef& net) {
  std::map<std::string, BlobAccesses> access;
  for (int j = 0; j < net.op_size(); ++j) {
    const OperatorDef& op = net.op(j);
    // A control input is a read for lifetimes: the blob stays alive until the op has run.
    for (const auto* reads : {&op.input(), &op.control_input()}) {
      for (const std::string& in : *reads) {
        BlobAccesses& a = access[in];
        if (a.touches.empty()) a.read_first = true;
        AddOnce(&a.touches, j);
      }
    }
    for (const std::string& out : op.output()) {
      BlobAccesses& a = access[out];
      AddOnce(&a.touches, j);
      AddOnce(&a.writes, j);
    }
  }
  return access;
}

int64_t RoundUp(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace

std::vector<Bitset> HappensBefore(const NetDef& net, PlanExecutor executor) {
  const int n = net.op_size();
  std::vector<Bitset> after(n, Bitset(n));
  if (executor == PlanExecutor::kSimple) {
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) after[i].Set(j);
    }
    return after;
  }
  DataflowGraph g = BuildDataflow(net);
  for (int i = n - 1; i >= 0; --i) {
    for (int c : g.children[i]) {
      after[i].Set(c);
      after[i].OrWith(after[c]);
    }
  }
  return after;
}

BlobLifetimes::BlobLifetimes(const NetDef& net, const PlanRequest& request) {
  CollectBlobs(net, request);
  std::vector<Bitset> after = HappensBefore(net, request.executor);
  ComputePrecedence(after);
  FindInplacePairs(net, request, after);
}

std::vector<std::vector<int>> BlobLifetimes::BlobsByDevice() const {
  std::vector<std::vector<int>> by_device(devices_.size());
  for (int b = 0; b < num_blobs(); ++b) by_device[blobs_[b].device].push_back(b);
  return by_device;
}

void BlobLifetimes::CollectBlobs(const NetDef& net, const PlanRequest& request) {
  std::map<std::string, BlobAccesses> access = CollectAccesses(net);
  std::set<std::string> keep = request.keep;
  keep.insert(net.external_input().begin(), net.external_input().end());
  keep.insert(net.external_output().begin(), net.external_output().end());
  for (const auto& [gradient, of] : request.gradients) {
    auto state = access.find(of);
    if (state != access.end() && state->second.read_first && !request.share_parameter_gradients) {
      keep.insert(gradient);
    }
  }
  const bool training = request.mode == PlanMode::kTraining;
  std::map<std::pair<int, int>, int> device_index;
  for (const auto& [name, a] : access) {
    auto size = request.blob_bytes.find(name);
    if (size == request.blob_bytes.end() || size->second <= 0) continue;
    if (a.read_first || a.writes.empty() || keep.count(name)) continue;
    if (training && !request.gradients.count(name) && !request.share_activations) continue;
    DeviceOption device = BlobDevice(net, request, name, a.writes.front());
    auto key = std::make_pair(device.device_type(), device.device_id());
    auto [it, added] = device_index.emplace(key, static_cast<int>(devices_.size()));
    if (added) {
      devices_.emplace_back();
      devices_.back().set_device_type(key.first);
      devices_.back().set_device_id(key.second);
    }
    blobs_.push_back({name, RoundUp(size->second, request.alignment), size->second, it->second,
                      a.writes, a.touches});
  }
  std::stable_sort(blobs_.begin(), blobs_.end(), [](const BlobLifetime& x, const BlobLifetime& y) {
    return x.writes.front() < y.writes.front();
  });
}

void BlobLifetimes::ComputePrecedence(const std::vector<Bitset>& after) {
  const int m = num_blobs();
  const int n = after.empty() ? 0 : after[0].size();
  precedes_.assign(m, Bitset(m));
  for (int a = 0; a < m; ++a) {
    Bitset after_all(n);
    after_all.SetAll();
    for (int t : blobs_[a].touches) after_all.AndWith(after[t]);
    const int last_touch = blobs_[a].touches.back();
    for (int b = a + 1; b < m; ++b) {
      const std::vector<int>& writes = blobs_[b].writes;
      if (writes.front() <= last_touch) continue;
      if (std::all_of(writes.begin(), writes.end(), [&](int w) { return after_all.Test(w); })) {
        precedes_[a].Set(b);
      }
    }
  }
}

void BlobLifetimes::FindInplacePairs(const NetDef& net, const PlanRequest& request,
                                     const std::vector<Bitset>& after) {
  std::unordered_map<std::string, int> index;
  for (int b = 0; b < num_blobs(); ++b) index[blobs_[b].name] = b;
  auto find = [&](const std::string& name) {
    auto it = index.find(name);
    return it == index.end() ? -1 : it->second;
  };
  const int ops = std::min<int>(net.op_size(), static_cast<int>(request.inplace.size()));
  for (int k = 0; k < ops; ++k) {
    const OperatorDef& op = net.op(k);
    for (auto [i, o] : request.inplace[k]) {
      if (i >= op.input_size() || o >= op.output_size()) continue;
      const int a = find(op.input(i)), b = find(op.output(o));
      if (a < 0 || b < 0 || a == b || blobs_[a].device != blobs_[b].device) continue;
      // Elementwise kernels run in place only over an input of the output's size (a broadcast
      // Add writing over its smaller input would read what it already overwrote).
      if (blobs_[a].raw_bytes != blobs_[b].raw_bytes) continue;
      const auto& ins = op.input();
      const auto& outs = op.output();
      if (std::count(ins.begin(), ins.end(), op.input(i)) != 1) continue;
      if (std::count(ins.begin(), ins.end(), op.output(o)) != 0) continue;
      if (std::count(outs.begin(), outs.end(), op.input(i)) != 0) continue;
      bool ok = true;
      for (int t : blobs_[a].touches) ok = ok && (t == k || after[t].Test(k));
      for (int u : blobs_[b].touches) ok = ok && (u == k || after[k].Test(u));
      if (ok) inplace_.emplace_back(a, b);
    }
  }
  std::sort(inplace_.begin(), inplace_.end());
  inplace_.erase(std::unique(inplace_.begin(), inplace_.end()), inplace_.end());
}

}  // namespace braid
