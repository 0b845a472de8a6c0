// RunCommand: runs a shell command line (a tool under test) and returns its exit code and its
// output, stdout and stderr together.
//
//   const CommandResult r = RunCommand(std::string(BRAID_RUN_BINARY) + " net.pbtxt");
//   EXPECT_EQ(r.exit_code, 0) << r.output;
//
// exit_code is -1 when the command could not be started or did not exit normally (a signal).
#ifndef BRAID_TESTS_TESTING_RUN_COMMAND_H_
#define BRAID_TESTS_TESTING_RUN_COMMAND_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace braid::testing {

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

inline CommandResult RunCommand(const std::string& command) {
  CommandResult result{-1, ""};
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_RUN_COMMAND_H_
