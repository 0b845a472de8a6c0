#include "runtime/models/blob_uses.h"

#include <algorithm>
#include <string>

namespace braid {

std::map<std::string, BlobUses> UsesOf(const NetDef& net) {
  std::map<std::string, BlobUses> uses;
  for (int i = 0; i < net.op_size(); ++i) {
    for (const std::string& in : net.op(i).input()) uses[in].readers.push_back(i);
    for (const std::string& in : net.op(i).control_input()) uses[in].readers.push_back(i);
    for (const std::string& out : net.op(i).output()) uses[out].writers.push_back(i);
  }
  return uses;
}

bool OnlyOp(const std::vector<int>& ops, int op) {
  return !ops.empty() && std::all_of(ops.begin(), ops.end(), [op](int o) { return o == op; });
}

bool IsExternalOutput(const NetDef& net, const std::string& blob) {
  return std::find(net.external_output().begin(), net.external_output().end(), blob) !=
         net.external_output().end();
}

bool TouchedBetween(const std::map<std::string, BlobUses>& uses, const std::string& blob, int after,
                    int before) {
  const auto it = uses.find(blob);
  if (it == uses.end()) return false;
  for (const std::vector<int>* ops : {&it->second.readers, &it->second.writers}) {
    for (int o : *ops) {
      if (o > after && o < before) return true;
    }
  }
  return false;
}

}  // namespace braid
