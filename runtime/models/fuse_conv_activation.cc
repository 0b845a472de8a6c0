#include "runtime/models/fuse_conv_activation.h"

#include <limits>
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

// The Conv op whose activation op `relu` can be fused into it (the header's conditions); -1 if
// none.
int FusableConv(const NetDef& net, const std::map<std::string, BlobUses>& uses, int relu) {
  const OperatorDef& op = net.op(relu);
  if ((op.type() != "Relu" && op.type() != "Clip") || op.input_size() != 1 ||
      op.output_size() != 1) {
    return -1;
  }
  const int conv = AbsorbingProducer(net, uses, relu);
  if (conv < 0) return -1;
  const OperatorDef& c = net.op(conv);
  if (c.type() != "Conv" || DeviceFromProto(OpDevice(net, conv)).type == DeviceType::kCuda ||
      ArgumentReader(c.arg()).Has(kFusedActivationArg)) {
    return -1;
  }
  return conv;
}

}  // namespace

int FuseConvActivation(NetDef* net) {
  int fused = 0;
  std::map<std::string, BlobUses> uses = UsesOf(*net);
  for (int j = 0; j < net->op_size();) {
    const int conv = FusableConv(*net, uses, j);
    if (conv < 0) {
      ++j;
      continue;
    }
    const OperatorDef& activation = net->op(j);
    OperatorDef* op = net->mutable_op(conv);
    op->set_output(0, activation.output(0));
    Argument* kind = op->add_arg();
    kind->set_name(kFusedActivationArg);
    kind->set_s(activation.type());
    if (activation.type() == "Clip") {
      const ArgumentReader args(activation.arg());
      for (const auto& [name, bound] :
           {std::pair{kFusedMinArg, args.Get<float>("min", std::numeric_limits<float>::lowest())},
            std::pair{kFusedMaxArg, args.Get<float>("max", std::numeric_limits<float>::max())}}) {
        Argument* arg = op->add_arg();
        arg->set_name(name);
        arg->set_f(bound);
      }
    }
    net->mutable_op()->DeleteSubrange(j, 1);  // the next op is at j now
    uses = UsesOf(*net);
    ++fused;
  }
  return fused;
}

}  // namespace braid
