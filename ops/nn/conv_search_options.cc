#include "ops/nn/conv_search_options.h"

#include <algorithm>
#include <string>

#include "ops/common/env_switch.h"
#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"

namespace braid {

ConvSearchOptions ConvSearchOptionsOf(const OperatorDef& def) {
  const ArgumentReader args(def.arg());
  ConvSearchOptions o;
  o.timed = args.Get<int64_t>("exhaustive_search", 1) != 0;
  static const bool deterministic_by_default = EnvSwitch("BRAID_CUDNN_DETERMINISTIC");
  o.deterministic = args.Get<int64_t>("deterministic", deterministic_by_default ? 1 : 0) != 0;
  o.workspace_limit = args.Get<int64_t>("ws_nbytes_limit", kDefaultConvWorkspaceLimit);
  if (o.workspace_limit < 0) {
    ThrowInvalidArgument(def.type() + " '" + (def.output_size() > 0 ? def.output(0) : "") +
                         "': ws_nbytes_limit must be >= 0 bytes, got " +
                         std::to_string(o.workspace_limit));
  }
  return o;
}

int64_t ConvWorkspaceLimit(int64_t available, int64_t cap) {
  return available < 0 ? cap : std::min(available, cap);
}

}  // namespace braid
