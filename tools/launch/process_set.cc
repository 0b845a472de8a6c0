#include "tools/launch/process_set.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "braid/status.h"

namespace braid {
namespace {

void ThrowErrno(const std::string& what) {
  throw Error(Status::IoError("braid_launch: " + what + ": " + strerror(errno)));
}

// The child's side of Spawn, between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecRank(pid_t launcher, int out_fd, int err_fd, char* const* argv,
                           char* const* envp) {
  setpgid(0, 0);
  // Ranks die with the launcher; if it is already gone, the death signal would never come.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) _exit(127);
  // Signals are blocked until here: the launcher's handlers (inherited until exec) must not run
  // in the child, and the ignored SIGPIPE would stay ignored across exec.
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    signal(signal_number, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0) _exit(127);
  // A rank is not in the terminal's foreground group: reading the terminal would stop it.
  if (isatty(STDIN_FILENO)) {
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  }
  execvpe(argv[0], argv, envp);
  const char* reason = strerror(errno);
  const char* parts[] = {"braid_launch: cannot run '", argv[0], "': ", reason, "\n"};
  for (const char* part : parts) {
    if (write(STDERR_FILENO, part, strlen(part)) < 0) break;
  }
  _exit(127);
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

ProcessSet::~ProcessSet() {
  for (int i = 0; i < size(); ++i) {
    CloseOut(i);
    CloseErr(i);
  }
  SignalAll(SIGKILL);
  for (RankProcess& rank : ranks_) {
    if (!rank.exited) waitpid(rank.pid, &rank.status, 0);
  }
}

int ProcessSet::Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  // Invariant: braid_launch refuses an empty command before spawning ("no command after '--'").
  CHECK(!argv.empty());
  std::vector<std::string> args = argv, vars = env;
  std::vector<char*> arg_pointers = Pointers(args), env_pointers = Pointers(vars);
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) ThrowErrno("pipe");
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    ThrowErrno("pipe");
  }
  const pid_t launcher = getpid();
  sigset_t all, before;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &before);
  const pid_t pid = fork();
  if (pid == 0) ExecRank(launcher, out[1], err[1], arg_pointers.data(), env_pointers.data());
  sigprocmask(SIG_SETMASK, &before, nullptr);
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    ThrowErrno("fork");
  }
  // Also here: a signal sent before the child's own setpgid must still reach its group.
  setpgid(pid, pid);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  RankProcess rank;
  rank.pid = pid;
  rank.out_fd = out[0];
  rank.err_fd = err[0];
  ranks_.push_back(rank);
  return size() - 1;
}

std::vector<int> ProcessSet::Reap() {
  std::vector<int> reaped;
  for (int i = 0; i < size(); ++i) {
    RankProcess& rank = ranks_[i];
    if (rank.exited) continue;
    const pid_t pid = waitpid(rank.pid, &rank.status, WNOHANG);
    if (pid == rank.pid) {
      rank.exited = true;
      reaped.push_back(i);
    }
  }
  return reaped;
}

void ProcessSet::SignalAll(int signal) {
  for (const RankProcess& rank : ranks_) {
    if (!rank.exited) kill(-rank.pid, signal);
  }
}

void ProcessSet::KillLeftovers(int index) {
  if (ranks_[index].exited) kill(-ranks_[index].pid, SIGKILL);
}

void ProcessSet::CloseOut(int index) {
  int& fd = ranks_[index].out_fd;
  if (fd >= 0) close(fd);
  fd = -1;
}

void ProcessSet::CloseErr(int index) {
  int& fd = ranks_[index].err_fd;
  if (fd >= 0) close(fd);
  fd = -1;
}

int ProcessSet::running() const {
  int count = 0;
  for (const RankProcess& rank : ranks_) count += rank.exited ? 0 : 1;
  return count;
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev == nullptr ? "signal " + std::to_string(signal) : std::string("SIG") + abbrev;
}

std::string DescribeWaitStatus(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return "was killed by signal " + std::to_string(signal) + " (" + SignalName(signal) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

int ExitCodeOfWaitStatus(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace braid
