#include "runtime/models/fuse_conv_relu.h"

#include <map>
#include <string>

#include "runtime/argument.h"
#include "runtime/device.h"
#include "runtime/models/blob_uses.h"

namespace braid {
namespace {

bool OnCuda(const NetDef& net, const OperatorDef& op) {
  const DeviceOption& option = op.has_device_option() ? op.device_option() : net.device_option();
  return DeviceFromProto(option).type == DeviceType::kCuda;
}

// The Conv op whose Relu op `relu` can be fused into it (the header's conditions); -1 if none.
int FusableConv(const NetDef& net, const std::map<std::string, BlobUses>& uses, int relu) {
  const OperatorDef& op = net.op(relu);
  if (op.type() != "Relu" || op.input_size() != 1 || op.output_size() != 1) return -1;
  const std::string& x = op.input(0);
  const std::string& y = op.output(0);
  const bool in_place = x == y;
  const BlobUses& x_uses = uses.at(x);
  int conv = -1;
  for (int w : x_uses.writers) {
    if (w < relu) conv = w;
  }
  if (conv < 0) return -1;
  const OperatorDef& c = net.op(conv);
  if (c.type() != "Conv" || c.output_size() != 1 || OnCuda(net, c) ||
      ArgumentReader(c.arg()).Get<bool>(kFusedReluArg, false)) {
    return -1;
  }
  for (int w : x_uses.writers) {
    if (w != conv && !(in_place && w == relu)) return -1;
  }
  for (int r : x_uses.readers) {
    if (r != relu && !(in_place && r > relu)) return -1;
  }
  if (!in_place && (IsExternalOutput(net, x) || TouchedBetween(uses, y, conv, relu))) return -1;
  return conv;
}

}  // namespace

int FuseConvRelu(NetDef* net) {
  int fused = 0;
  std::map<std::string, BlobUses> uses = UsesOf(*net);
  for (int j = 0; j < net->op_size();) {
    const int conv = FusableConv(*net, uses, j);
    if (conv < 0) {
      ++j;
      continue;
    }
    OperatorDef* op = net->mutable_op(conv);
    op->set_output(0, net->op(j).output(0));
    Argument* relu = op->add_arg();
    relu->set_name(kFusedReluArg);
    relu->set_i(1);
    net->mutable_op()->DeleteSubrange(j, 1);  // the next op is at j now
    uses = UsesOf(*net);
    ++fused;
  }
  return fused;
}

}  // namespace braid
