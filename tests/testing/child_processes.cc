#include "testing/child_processes.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace braid::testing {

ChildProcesses::~ChildProcesses() {
  for (pid_t pid : running_) kill(pid, SIGKILL);
  for (pid_t pid : running_) waitpid(pid, nullptr, 0);
}

pid_t ChildProcesses::Spawn(const std::string& test,
                            const std::map<std::string, std::string>& env) {
  return SpawnProgram({"/proc/self/exe", "--gtest_filter=" + test, "--gtest_also_run_disabled_tests"},
                      env);
}

pid_t ChildProcesses::SpawnProgram(std::vector<std::string> args,
                                   const std::map<std::string, std::string>& env) {
  // Everything exec needs is built before fork: the child may only call async-signal-safe code.
  std::vector<std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    if (env.count(var.substr(0, var.find('='))) == 0) vars.push_back(var);
  }
  for (const auto& [name, value] : env) vars.push_back(name + "=" + value);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  for (auto& v : vars) envp.push_back(v.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  running_.push_back(pid);
  return pid;
}

int ChildProcesses::Wait(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 || std::chrono::steady_clock::now() >= deadline) {
      if (done == 0) Kill(pid, SIGKILL);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  running_.erase(std::remove(running_.begin(), running_.end(), pid), running_.end());
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

void ChildProcesses::Kill(pid_t pid, int signal) {
  kill(pid, signal);
  if (signal == SIGKILL) {
    waitpid(pid, nullptr, 0);
    running_.erase(std::remove(running_.begin(), running_.end(), pid), running_.end());
  }
}

std::string ChildEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string MakeTempDir(const std::string& what) {
  const std::string base = ChildEnv("TMPDIR").empty() ? "/tmp" : ChildEnv("TMPDIR");
  std::string pattern = base + "/braid_" + what + "_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + pattern);
  return pattern;
}

}  // namespace braid::testing
