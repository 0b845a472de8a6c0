#include "runtime/core/operator.h"

#include <glog/logging.h>

#include "braid/status.h"
#include "planner/op_seed.h"
#include "runtime/core/workspace.h"

namespace braid {

Layout RequestedLayout(const OperatorDef& op, int output) {
  bool listed = false;
  int64_t block = 16;  // nets written before kChannelBlockArg existed blocked by 16
  for (const Argument& arg : op.arg()) {
    if (arg.name() == kChannelBlockArg) block = arg.i();
    if (arg.name() != kBlockedOutputsArg) continue;
    for (int64_t o : arg.ints()) listed = listed || o == output;
  }
  return listed ? BlockedLayout(block) : Layout::kPlain;
}

OperatorBase::OperatorBase(const OperatorDef& def, Workspace* ws)
    : def_(def), device_(DeviceFromProto(def.device_option())), args_(def_.arg()) {
  if (const OpSchema* schema = FindSchema(def_.type())) {
    input_place_ = schema->input_place();
    output_place_ = schema->output_place();
  }
  for (const std::string& name : def_.input()) {
    const Tensor* t = ws->GetBlob(name);
    if (t == nullptr) {
      throw Error(Status::InvalidArgument(def_.type() + " op '" + def_.name() + "': input blob '" +
                                          name + "' must exist before its op is created"));
    }
    inputs_.push_back(t);
  }
  Device home;
  const bool placed = DeviceAtPlace(output_place_, device_, &home);
  for (const std::string& name : def_.output()) {
    Tensor* t = ws->CreateBlob(name);
    if (placed && !t->has_storage() && !(t->device() == home)) *t = Tensor(home);
    outputs_.push_back(t);
  }
  seed_ = OpSeed(def_);
}

void OperatorBase::CheckPlace(const Tensor& t, BlobPlace place, const std::string& blob) const {
  if (PlaceReaches(place, device_, t.device())) return;
  Device wanted;
  DeviceAtPlace(place, device_, &wanted);
  throw Error(Status::InvalidArgument("blob '" + blob + "' is on " + t.device().ToString() +
                                      "; copy it to " + wanted.ToString() + " first"));
}

std::mt19937_64& OperatorBase::rng() {
  if (!rng_) rng_ = std::make_unique<std::mt19937_64>(seed_);
  return *rng_;
}

Tensor* OperatorBase::Output(int i, DType dtype, std::vector<int64_t> shape) {
  Tensor* t = Output(i);
  t->Resize(dtype, std::move(shape));
  return t;
}

}  // namespace braid
