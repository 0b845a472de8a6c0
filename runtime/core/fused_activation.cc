#include "runtime/core/fused_activation.h"

#include <limits>
#include <string>

#include "braid/status.h"
#include "runtime/core/argument.h"

namespace braid {

FusedActivation FusedActivationOf(const OperatorDef& op) {
  const ArgumentReader args(op.arg());
  FusedActivation activation;
  if (!args.Has(kFusedActivationArg)) return activation;
  const std::string kind = args.Get<std::string>(kFusedActivationArg, "");
  if (kind == "Relu") {
    activation.kind = FusedActivation::Kind::kRelu;
  } else if (kind == "Clip") {
    activation.kind = FusedActivation::Kind::kClip;
    activation.min = args.Get<float>(kFusedMinArg, std::numeric_limits<float>::lowest());
    activation.max = args.Get<float>(kFusedMaxArg, std::numeric_limits<float>::max());
    if (!(activation.min <= activation.max)) {
      throw Error(Status::InvalidArgument(std::string(op.type()) + " '" + op.name() +
                                          "': " + kFusedMinArg + " = " +
                                          std::to_string(activation.min) + " exceeds " +
                                          kFusedMaxArg + " = " + std::to_string(activation.max)));
    }
  } else {
    throw Error(Status::InvalidArgument(std::string(op.type()) + " '" + op.name() +
                                        "': " + kFusedActivationArg + " is '" + kind +
                                        "'; it takes Relu or Clip"));
  }
  return activation;
}

bool HasFusedSum(const OperatorDef& op) {
  const int64_t sum = ArgumentReader(op.arg()).Get<int64_t>(kFusedSumArg, 0);
  if (sum != 0 && sum != 1) {
    throw Error(Status::InvalidArgument(std::string(op.type()) + " '" + op.name() + "': " +
                                        kFusedSumArg + " = " + std::to_string(sum) +
                                        "; it takes 0 or 1"));
  }
  return sum == 1;
}

bool HasFusedEpilogue(const OperatorDef& op) {
  return HasFusedSum(op) || ArgumentReader(op.arg()).Has(kFusedActivationArg);
}

}  // namespace braid
