#include "planner/dataflow.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace braid {
namespace {

struct BlobAccess {
  int last_writer = -1;
  std::vector<int> readers_since_write;
};

void SortUnique(std::vector<int>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

std::set<std::string> BlobNamesIn(const NetDef& net) {
  std::set<std::string> names(net.external_input().begin(), net.external_input().end());
  names.insert(net.external_output().begin(), net.external_output().end());
  for (const OperatorDef& op : net.op()) {
    names.insert(op.input().begin(), op.input().end());
    names.insert(op.output().begin(), op.output().end());
    names.insert(op.control_input().begin(), op.control_input().end());
  }
  return names;
}

DataflowGraph BuildDataflow(const NetDef& net) {
  const int n = net.op_size();
  DataflowGraph g;
  g.parents.resize(n);
  g.children.resize(n);
  std::unordered_map<std::string, BlobAccess> blobs;
  for (int j = 0; j < n; ++j) {
    const OperatorDef& op = net.op(j);
    std::vector<int>& parents = g.parents[j];
    auto after_writer = [&](const std::string& blob) {
      auto it = blobs.find(blob);
      if (it != blobs.end() && it->second.last_writer >= 0)
        parents.push_back(it->second.last_writer);
    };
    for (const std::string& in : op.input()) after_writer(in);
    for (const std::string& ctl : op.control_input()) after_writer(ctl);
    for (const std::string& out : op.output()) {
      BlobAccess& access = blobs[out];
      if (access.last_writer >= 0) parents.push_back(access.last_writer);
      for (int reader : access.readers_since_write) parents.push_back(reader);
    }
    SortUnique(&parents);
    parents.erase(std::remove(parents.begin(), parents.end(), j), parents.end());
    // Record reads before writes: an in-place op's read belongs to the previous version.
    for (const std::string& in : op.input()) blobs[in].readers_since_write.push_back(j);
    for (const std::string& out : op.output()) {
      BlobAccess& access = blobs[out];
      access.last_writer = j;
      access.readers_since_write.clear();
    }
  }
  for (int j = 0; j < n; ++j) {
    for (int i : g.parents[j]) g.children[i].push_back(j);
  }
  return g;
}

}  // namespace braid
