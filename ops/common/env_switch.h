// On/off switches read from the environment by the kernels (BRAID_CUDA_TF32,
// BRAID_CUDNN_DETERMINISTIC), one rule for all: "1", "on", "true" turn a switch on; unset, "0",
// "off", "false" leave it off; anything else leaves it off with a warning naming the variable.
//
//   static const bool on = EnvSwitch("BRAID_CUDNN_DETERMINISTIC");   // read once by the caller
//   ParseEnvSwitch("BRAID_CUDA_TF32", "yes");                         // false, and a warning
//
// Thread safety: pure but for the warning's log line (glog is thread-safe).
#ifndef BRAID_OPS_COMMON_ENV_SWITCH_H_
#define BRAID_OPS_COMMON_ENV_SWITCH_H_

namespace braid {

// `value` (null: unset) as the switch `variable` by the rule above.
bool ParseEnvSwitch(const char* variable, const char* value);
// The environment's `variable`, parsed; each call reads it again.
bool EnvSwitch(const char* variable);

}  // namespace braid

#endif  // BRAID_OPS_COMMON_ENV_SWITCH_H_
