#include "runtime/models/pack_parameters.h"

#include <map>

#include "runtime/core/op_schema.h"
#include "runtime/core/tensor.h"

namespace braid {
namespace {

// How `net` uses one blob: the ops reading it and at which inputs, whether anything else does.
struct BlobUse {
  std::vector<std::pair<const OperatorDef*, int>> reads;
  bool written = false;
};

}  // namespace

std::vector<std::string> PackParameters(const NetDef& net, const std::set<std::string>& parameters,
                                        Workspace* workspace) {
  std::map<std::string, BlobUse> uses;
  for (const OperatorDef& op : net.op()) {
    for (int i = 0; i < op.input_size(); ++i) {
      if (parameters.count(op.input(i)) > 0) uses[op.input(i)].reads.emplace_back(&op, i);
    }
    for (const std::string& output : op.output()) {
      if (parameters.count(output) > 0) uses[output].written = true;
    }
  }
  for (const std::string& output : net.external_output()) {
    if (uses.count(output) > 0) uses[output].written = true;  // read by the caller
  }
  std::vector<std::string> packed;
  for (const auto& [blob, use] : uses) {
    if (use.written || use.reads.empty()) continue;
    const OperatorDef& first = *use.reads.front().first;
    const OpSchema* schema = FindSchema(first.type());
    bool packable = schema != nullptr;
    for (const auto& [op, input] : use.reads) {
      packable = packable && op->type() == first.type() && schema->packed_input(input) != nullptr;
    }
    Tensor* tensor = workspace->GetBlob(blob);
    if (!packable || tensor == nullptr) continue;
    if ((*schema->packed_input(use.reads.front().second))(first, tensor)) packed.push_back(blob);
  }
  return packed;
}

}  // namespace braid
