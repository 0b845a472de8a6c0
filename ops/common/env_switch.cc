#include "ops/common/env_switch.h"

#include <glog/logging.h>

#include <cstdlib>
#include <string>

namespace braid {

bool ParseEnvSwitch(const char* variable, const char* value) {
  const std::string v = value == nullptr ? "" : value;
  if (v == "1" || v == "on" || v == "true") return true;
  if (!v.empty() && v != "0" && v != "off" && v != "false") {
    LOG(WARNING) << variable << "='" << v << "' is neither 1 nor 0; it stays off";
  }
  return false;
}

bool EnvSwitch(const char* variable) { return ParseEnvSwitch(variable, std::getenv(variable)); }

}  // namespace braid
