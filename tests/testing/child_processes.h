// ChildProcesses: copies of the running test binary, each running one (DISABLED_) test as a child,
// for tests of several processes (ranks). Children are spawned with fork + exec of
// /proc/self/exe (never a bare fork: the parent has TBB and Gloo threads), with extra environment
// variables telling the child test its role; a child test reads them with ChildEnv.
//
//   ChildProcesses children;
//   pid_t p = children.Spawn("ProcessGroupChild.DISABLED_Rank", {{"BRAID_TEST_RANK", "0"}});
//   EXPECT_EQ(children.Wait(p, std::chrono::seconds(20)), 0);
//
// The destructor SIGKILLs and reaps every child still running, so no child outlives its test.
// Thread safety: none; one test thread uses it.
#ifndef BRAID_TESTS_TESTING_CHILD_PROCESSES_H_
#define BRAID_TESTS_TESTING_CHILD_PROCESSES_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace braid::testing {

class ChildProcesses {
 public:
  ChildProcesses() = default;
  ~ChildProcesses();
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;

  // Runs `test` (a full gtest name, usually DISABLED_) in a new copy of this binary.
  pid_t Spawn(const std::string& test, const std::map<std::string, std::string>& env);
  // Runs a program (argv[0] is searched in PATH) with this environment plus `env`.
  pid_t SpawnProgram(std::vector<std::string> argv, const std::map<std::string, std::string>& env);
  // The child's exit code, 128 + signal if a signal ended it, or -1 if it was still running after
  // `timeout` (it is then killed).
  int Wait(pid_t pid, std::chrono::milliseconds timeout);
  void Kill(pid_t pid, int signal);

 private:
  std::vector<pid_t> running_;
};

// The value of environment variable `name`, or "" when unset.
std::string ChildEnv(const char* name);

// A fresh empty directory under $TMPDIR (or /tmp), named after `what`.
std::string MakeTempDir(const std::string& what);

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_CHILD_PROCESSES_H_
