// ProcessSet: the local ranks of one braid_launch job, started with fork/exec and supervised.
//
// Each rank runs in its own process group (so a stop reaches the processes it started, too) with
// its stdout and stderr on pipes that the launcher reads (non-blocking, close-on-exec in the
// launcher). Ranks share the launcher's stdin, unless it is a terminal: then /dev/null (a rank
// outside the terminal's foreground group would be stopped by reading it). A rank also gets
// PR_SET_PDEATHSIG = SIGKILL, so it dies when the launcher is killed with SIGKILL; processes a
// rank starts itself are reached by the group signals of a normal stop, not by that (the kernel
// sends the death signal to direct children only).
//
// Not thread-safe: one thread (the launcher's) owns a ProcessSet. Ownership: it owns the pipes'
// read ends and closes them; processes are reaped by Reap and signalled only while unreaped.
//
//   ProcessSet ranks;
//   for (int r = 0; r < n; ++r) ranks.Spawn(argv_of(r), env_of(r));
//   while (ranks.running() > 0) { poll(...on ranks.rank(r).out_fd...); ranks.Reap(); }
#ifndef BRAID_TOOLS_LAUNCH_PROCESS_SET_H_
#define BRAID_TOOLS_LAUNCH_PROCESS_SET_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace braid {

struct RankProcess {
  pid_t pid = -1;       // also its process group id
  int out_fd = -1;      // read end of its stdout pipe; -1 once closed
  int err_fd = -1;      // read end of its stderr pipe; -1 once closed
  bool exited = false;  // reaped; `status` is its waitpid status
  int status = 0;
};

class ProcessSet {
 public:
  ProcessSet() = default;
  ProcessSet(const ProcessSet&) = delete;
  ProcessSet& operator=(const ProcessSet&) = delete;
  ~ProcessSet();  // closes the pipes; SIGKILLs and reaps ranks still running

  // Starts argv[0] (searched in PATH) with `argv` and the environment `env` ("NAME=value").
  // A command that cannot be executed makes the rank print why on its stderr and exit 127.
  // Returns the rank's index. Throws braid::Error when fork or pipe fail.
  int Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env);

  // Reaps every rank that has exited (never blocks); returns the indices reaped by this call,
  // in the order waitpid reported them.
  std::vector<int> Reap();

  // Sends `signal` to the process group of every rank not yet reaped.
  void SignalAll(int signal);
  // Sends SIGKILL to a reaped rank's process group: processes it left behind.
  void KillLeftovers(int index);

  void CloseOut(int index);
  void CloseErr(int index);

  int size() const { return static_cast<int>(ranks_.size()); }
  int running() const;
  const RankProcess& rank(int index) const { return ranks_[index]; }

 private:
  std::vector<RankProcess> ranks_;
};

// "exited with status 3", "was killed by signal 9 (SIGKILL)" or "exited with status 0".
std::string DescribeWaitStatus(int status);
// The launcher's exit status for a rank's wait status: its exit status, or 128 + its signal.
int ExitCodeOfWaitStatus(int status);
// "SIGKILL" for 9; "signal 42" when the number has no name.
std::string SignalName(int signal);

}  // namespace braid

#endif  // BRAID_TOOLS_LAUNCH_PROCESS_SET_H_
