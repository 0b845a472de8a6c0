// The thread runtimes' environment: libgomp (OpenMP: oneDNN, the elementwise kernels) and OpenBLAS
// read their settings once, as they load, so a tool that wants other settings sets them and
// re-executes itself before it runs anything.
//
// Serving under load: libgomp's threads spin (by default some 300,000 rounds) before they sleep
// while they wait for their team; when other processes hold the cores, a descheduled teammate
// keeps the others spinning on its behalf. kBoundedSpin (GOMP_SPINCOUNT=1000) makes them sleep
// soon: beside busy processes it nearly halves serving latency, and costs nothing quiet (README,
// "Measurements behind the design"). The serving tools set it unless the caller's environment sets
// GOMP_SPINCOUNT or OMP_WAIT_POLICY; training keeps libgomp's default (bounded spinning costs
// training speed).
//
//   ExecWithEnvironment(original_argv, {{"OMP_NUM_THREADS", "2", /*override=*/true}, kBoundedSpin});
//
// Not thread-safe (setenv, execv): call it from main, before threads start.
#ifndef BRAID_TOOLS_THREAD_ENVIRONMENT_H_
#define BRAID_TOOLS_THREAD_ENVIRONMENT_H_

#include <string>
#include <vector>

namespace braid {

struct EnvironmentSetting {
  std::string name;
  std::string value;
  // true: the tool's value wins over the caller's; false: a default, where the caller set none.
  bool override_caller = false;
  // A default is left out too where the caller set this variable ("": none).
  std::string unless_set = "";
};

// Left out where the caller set OMP_WAIT_POLICY: an explicit GOMP_SPINCOUNT would replace the
// spinning that policy chose.
inline const EnvironmentSetting kBoundedSpin = {"GOMP_SPINCOUNT", "1000", false, "OMP_WAIT_POLICY"};

// Applies `settings` and, when that changed the environment, re-executes /proc/self/exe with
// `argv` (main's argv as it came, before flag parsing reordered it; null-terminated). Returns when
// nothing changed, so the re-executed process continues; exits 1 if it cannot re-execute.
void ExecWithEnvironment(char** argv, const std::vector<EnvironmentSetting>& settings);

}  // namespace braid

#endif  // BRAID_TOOLS_THREAD_ENVIRONMENT_H_
