#include "runtime/operator.h"

#include <glog/logging.h>

#include "planner/op_seed.h"
#include "runtime/workspace.h"

namespace braid {

OperatorBase::OperatorBase(const OperatorDef& def, Workspace* ws)
    : def_(def), device_(DeviceFromProto(def.device_option())), args_(def_.arg()) {
  for (const std::string& name : def_.input()) {
    const Tensor* t = ws->GetBlob(name);
    CHECK(t != nullptr) << "input blob '" << name << "' must exist before its op is created";
    inputs_.push_back(t);
  }
  for (const std::string& name : def_.output()) {
    Tensor* t = ws->CreateBlob(name);
    if (!t->has_storage() && !(t->device() == device_)) *t = Tensor(device_);
    outputs_.push_back(t);
  }
  seed_ = OpSeed(def_);
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
