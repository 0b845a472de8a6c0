#include "planner/op_seed.h"

#include <string>

namespace braid {
namespace {

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

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
  return Fnv1a(def.output_size() > 0 ? def.output(0) : def.type());
}

}  // namespace braid
