#include "runtime/operator.h"

#include <glog/logging.h>

#include "runtime/workspace.h"

namespace braid {
namespace {

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

uint64_t SeedFor(const OperatorDef& def, const ArgumentReader& args) {
  if (args.Has("seed")) return static_cast<uint64_t>(args.Get<int64_t>("seed", 0));
  if (def.device_option().has_random_seed()) return def.device_option().random_seed();
  return Fnv1a(def.output_size() > 0 ? def.output(0) : def.type());
}

}  // namespace

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
  seed_ = SeedFor(def_, args_);
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
