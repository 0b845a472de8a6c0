#include "tools/thread_environment.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace braid {

void ExecWithEnvironment(char** argv, const std::vector<EnvironmentSetting>& settings) {
  bool changed = false;
  for (const EnvironmentSetting& setting : settings) {
    const char* now = std::getenv(setting.name.c_str());
    if (now != nullptr && (!setting.override_caller || setting.value == now)) continue;
    if (!setting.override_caller && !setting.unless_set.empty() &&
        std::getenv(setting.unless_set.c_str()) != nullptr) {
      continue;
    }
    setenv(setting.name.c_str(), setting.value.c_str(), 1);
    changed = true;
  }
  if (!changed) return;
  execv("/proc/self/exe", argv);
  std::perror("re-executing with the thread runtimes' settings");
  std::exit(1);
}

}  // namespace braid
