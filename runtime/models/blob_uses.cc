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
                    int before, bool reads) {
  const auto it = uses.find(blob);
  if (it == uses.end()) return false;
  for (const std::vector<int>* ops : {&it->second.readers, &it->second.writers}) {
    if (ops == &it->second.readers && !reads) continue;
    for (int o : *ops) {
      if (o > after && o < before) return true;
    }
  }
  return false;
}

int AbsorbingProducer(const NetDef& net, const std::map<std::string, BlobUses>& uses, int consumer,
                      int input) {
  const OperatorDef& op = net.op(consumer);
  if (op.input_size() <= input || op.output_size() != 1 || op.control_input_size() > 0) return -1;
  const std::string& x = op.input(input);
  const std::string& y = op.output(0);
  const bool in_place = x == y;
  const BlobUses& x_uses = uses.at(x);
  int producer = -1;
  for (int w : x_uses.writers) {
    if (w < consumer) producer = w;
  }
  if (producer < 0 || net.op(producer).output_size() != 1) return -1;
  for (int w : x_uses.writers) {
    if (w != producer && !(in_place && w >= consumer)) return -1;
  }
  for (int r : x_uses.readers) {
    if (r != consumer && !(in_place && r > consumer)) return -1;
  }
  if (!in_place && (IsExternalOutput(net, x) || TouchedBetween(uses, y, producer, consumer))) {
    return -1;
  }
  for (const std::string& in : net.op(producer).input()) {
    if (in == y) return -1;  // it would write its own input
  }
  return producer;
}

}  // namespace braid
