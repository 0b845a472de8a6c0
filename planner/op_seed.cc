#include "planner/op_seed.h"

#include <string>

#include "planner/fnv1a.h"

namespace braid {
namespace {

constexpr uint64_t kSeedBasis = 1469598103934665603ull;  // see planner/fnv1a.h

const Argument* SeedArgument(const OperatorDef& def) {
  for (const Argument& arg : def.arg()) {
    if (arg.name() == "seed" && arg.has_i()) return &arg;
  }
  return nullptr;
}

}  // namespace

bool HasExplicitSeed(const OperatorDef& def) {
  return SeedArgument(def) != nullptr || def.device_option().has_random_seed();
}

uint64_t OpSeed(const OperatorDef& def) {
  if (const Argument* seed = SeedArgument(def)) return static_cast<uint64_t>(seed->i());
  if (def.device_option().has_random_seed()) return def.device_option().random_seed();
  const std::string& name = def.output_size() > 0 ? def.output(0) : def.type();
  return Fnv1a64FromBasis(kSeedBasis, name.data(), name.size());
}

}  // namespace braid
