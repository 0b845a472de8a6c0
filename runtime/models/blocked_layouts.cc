#include "runtime/models/blocked_layouts.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/shape_inference.h"
#include "runtime/core/tensor.h"

namespace braid {
namespace {

bool Contains(const std::vector<int>& indices, int i) {
  return std::find(indices.begin(), indices.end(), i) != indices.end();
}

bool FollowsInputs(const OperatorDef& op) {
  const OpSchema* schema = FindSchema(op.type());
  return schema != nullptr && schema->layout_follows_inputs();
}

// Union-find over blob names; a blob never united with another is a class of its own.
class BlobClasses {
 public:
  void Unite(const std::string& a, const std::string& b) {
    const std::string root_a = Find(a), root_b = Find(b);
    if (root_a != root_b) parent_[root_a] = root_b;
  }

  std::string Find(std::string blob) {
    std::string root = blob;
    for (auto it = parent_.find(root); it != parent_.end(); it = parent_.find(root)) {
      root = it->second;
    }
    while (blob != root) blob = std::exchange(parent_[blob], root);  // path compression
    return root;
  }

 private:
  std::map<std::string, std::string> parent_;  // roots have no entry
};

OpSchema::LayoutPorts PortsOf(const OperatorDef& op) {
  const OpSchema* schema = FindSchema(op.type());
  return schema != nullptr ? schema->BlockedPortsOf(op) : OpSchema::LayoutPorts{};
}

// The channel block of the net's blocked layouts: the first one an op's kernels ask for (0: none
// asks, nothing is blocked).
int64_t NetChannelBlock(const NetDef& net) {
  for (const OperatorDef& op : net.op()) {
    const OpSchema::LayoutPorts ports = PortsOf(op);
    if (ports.channel_block != 0 && !(ports.inputs.empty() && ports.outputs.empty())) {
      return ports.channel_block;
    }
  }
  return 0;
}

// Blobs some op reads or writes at a position its schema does not take in the blocked layout, or
// through kernels that work on another block than `block`.
std::set<std::string> BlobsOffPorts(const NetDef& net, int64_t block) {
  std::set<std::string> off;
  for (const OperatorDef& op : net.op()) {
    OpSchema::LayoutPorts ports = PortsOf(op);
    if (ports.channel_block != 0 && ports.channel_block != block) ports = {};
    for (int i = 0; i < op.input_size(); ++i) {
      if (!Contains(ports.inputs, i)) off.insert(op.input(i));
    }
    for (int o = 0; o < op.output_size(); ++o) {
      if (!Contains(ports.outputs, o)) off.insert(op.output(o));
    }
  }
  return off;
}

// Blobs that may be blocked as far as their own shape, name and users go.
std::set<std::string> EligibleBlobs(const NetDef& net,
                                    const std::map<std::string, ShapeInfo>& known, int64_t block) {
  const std::map<std::string, ShapeInfo> shapes = InferBlobShapes(net, known);
  std::set<std::string> excluded = BlobsOffPorts(net, block);
  excluded.insert(net.external_input().begin(), net.external_input().end());
  excluded.insert(net.external_output().begin(), net.external_output().end());
  std::set<std::string> eligible;
  for (const OperatorDef& op : net.op()) {
    for (const std::string& blob : op.output()) {
      const auto it = shapes.find(blob);
      if (excluded.count(blob) == 0 && it != shapes.end() && it->second.known &&
          BlockableShape(it->second.dtype, it->second.dims, block)) {
        eligible.insert(blob);
      }
    }
  }
  return eligible;
}

// The eligible blobs whose whole class (through elementwise ops) is eligible.
std::set<std::string> BlockedBlobs(const NetDef& net, const std::set<std::string>& eligible) {
  BlobClasses classes;
  std::set<std::string> united;
  for (const OperatorDef& op : net.op()) {
    if (!FollowsInputs(op)) continue;
    std::vector<std::string> blobs(op.input().begin(), op.input().end());
    blobs.insert(blobs.end(), op.output().begin(), op.output().end());
    for (const std::string& blob : blobs) {
      classes.Unite(blobs.front(), blob);
      united.insert(blob);
    }
  }
  std::set<std::string> plain_roots;
  for (const std::string& blob : united) {
    if (eligible.count(blob) == 0) plain_roots.insert(classes.Find(blob));
  }
  std::set<std::string> blocked;
  for (const std::string& blob : eligible) {
    if (plain_roots.count(classes.Find(blob)) == 0) blocked.insert(blob);
  }
  return blocked;
}

void SetBlockedOutputs(OperatorDef* op, const std::set<std::string>& blocked, int64_t block) {
  for (int a = op->arg_size() - 1; a >= 0; --a) {
    const std::string& name = op->arg(a).name();
    if (name == kBlockedOutputsArg || name == kChannelBlockArg) {
      op->mutable_arg()->DeleteSubrange(a, 1);
    }
  }
  if (FollowsInputs(*op)) return;  // its outputs take its inputs' layout
  Argument arg;
  arg.set_name(kBlockedOutputsArg);
  for (int o = 0; o < op->output_size(); ++o) {
    if (blocked.count(op->output(o)) != 0) arg.add_ints(o);
  }
  if (arg.ints_size() == 0) return;
  *op->add_arg() = std::move(arg);
  Argument channel_block;
  channel_block.set_name(kChannelBlockArg);
  channel_block.set_i(block);
  *op->add_arg() = std::move(channel_block);
}

}  // namespace

int UseBlockedLayouts(NetDef* net, const std::map<std::string, ShapeInfo>& known) {
  const int64_t block = NetChannelBlock(*net);
  const std::set<std::string> blocked =
      block == 0 ? std::set<std::string>{} : BlockedBlobs(*net, EligibleBlobs(*net, known, block));
  for (OperatorDef& op : *net->mutable_op()) SetBlockedOutputs(&op, blocked, block);
  return static_cast<int>(blocked.size());
}

}  // namespace braid
