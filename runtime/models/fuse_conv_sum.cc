#include "runtime/models/fuse_conv_sum.h"

#include <map>
#include <string>
#include <utility>

#include "planner/memory_plan.h"
#include "runtime/core/argument.h"
#include "runtime/core/device.h"
#include "runtime/core/fused_activation.h"
#include "runtime/models/blob_uses.h"

namespace braid {
namespace {

struct Fusion {
  int conv = -1;
  int summand = -1;  // the addition's input the Conv adds
};

bool IsResidualAddition(const OperatorDef& op) {
  if ((op.type() != "Sum" && op.type() != "Add") || op.input_size() != 2 ||
      op.output_size() != 1 || op.input(0) == op.input(1)) {
    return false;
  }
  return op.type() == "Sum" || ArgumentReader(op.arg()).Get<int64_t>("broadcast", 0) == 0;
}

// Whether the Conv `conv` may take addition `sum`'s operand `input` (the header's conditions).
bool Fusable(const NetDef& net, const std::map<std::string, BlobUses>& uses, int sum, int input,
             int conv) {
  const OperatorDef& c = net.op(conv);
  const OperatorDef& add = net.op(sum);
  const std::string& summand = add.input(1 - input);
  const ArgumentReader args(c.arg());
  if (c.type() != "Conv" || args.Has(kFusedSumArg) || args.Has(kFusedActivationArg) ||
      summand == add.output(0)) {
    return false;
  }
  const DeviceOption device = OpDevice(net, conv);
  if (DeviceFromProto(device).type == DeviceType::kCuda ||
      device.SerializeAsString() != OpDevice(net, sum).SerializeAsString()) {
    return false;
  }
  for (const auto* names : {&c.input(), &c.control_input()}) {
    for (const std::string& in : *names) {
      if (TouchedBetween(uses, in, conv, sum, /*reads=*/false)) return false;
    }
  }
  return true;
}

Fusion FusionAt(const NetDef& net, const std::map<std::string, BlobUses>& uses, int sum) {
  Fusion best;
  if (!IsResidualAddition(net.op(sum))) return best;
  for (int input = 0; input < 2; ++input) {
    const int conv = AbsorbingProducer(net, uses, sum, input);
    if (conv > best.conv && Fusable(net, uses, sum, input, conv)) best = {conv, 1 - input};
  }
  return best;
}

}  // namespace

int FuseConvSum(NetDef* net) {
  int fused = 0;
  std::map<std::string, BlobUses> uses = UsesOf(*net);
  for (int j = 0; j < net->op_size(); ++j) {
    const Fusion f = FusionAt(*net, uses, j);
    if (f.conv < 0) continue;
    const OperatorDef& add = net->op(j);
    OperatorDef conv = net->op(f.conv);
    conv.set_output(0, add.output(0));
    conv.add_input(add.input(f.summand));
    Argument* arg = conv.add_arg();
    arg->set_name(kFusedSumArg);
    arg->set_i(1);
    *net->mutable_op(j) = std::move(conv);
    net->mutable_op()->DeleteSubrange(f.conv, 1);  // the fused Conv is at j - 1 now
    --j;
    uses = UsesOf(*net);
    ++fused;
  }
  return fused;
}

}  // namespace braid
