// braid_launch: starts the N local ranks of a multi-process job and supervises them.
//
//   braid_launch -n N [--rendezvous URL] [--timeout SECONDS] [--grace-seconds 5] -- COMMAND ARGS...
//
// Rank R runs `COMMAND ARGS... --rank R --world_size N --rendezvous URL` with the environment
// variables BRAID_RANK=R, BRAID_WORLD_SIZE=N and BRAID_RENDEZVOUS=URL added (and, for rank 0
// when the launcher's stdout is a terminal, BRAID_PROGRESS=1: draw a progress line). Without
// --rendezvous, URL is file://DIR for a fresh private directory DIR ($TMPDIR or /tmp,
// braid_launch.XXXXXX) that is removed when the launcher exits.
//
// Output: each line of each rank's stdout and stderr is printed whole, prefixed with "[rank R] ",
// on the launcher's stdout and stderr respectively. Progress lines (lines redrawn with '\r', as
// braid_train draws on a terminal): only rank 0's are shown, redrawn in place, and only when the
// launcher's stdout is a terminal; otherwise none are printed (tools/launch/rank_output.h).
//
// Failures: when a rank exits with a non-zero status or is killed by a signal, the launcher sends
// SIGTERM to every other rank's process group, SIGKILL after --grace-seconds, names the first rank
// that failed, how ("rank 2 exited with status 3", "rank 1 was killed by signal 9 (SIGKILL)") and
// its last 20 lines, and exits with that rank's exit status, or 128 + its signal. SIGINT, SIGTERM
// or SIGHUP to the launcher stops the ranks the same way (a second one sends SIGKILL at once) and
// exits 128 + that signal. --timeout SECONDS (0: none) stops the job after that long and exits 124.
// Ranks die with the launcher even when it is killed with SIGKILL (tools/launch/process_set.h).
//
// Exit codes: 0 every rank succeeded; the failed rank's status as above; 124 timed out; 2 bad
// flags (missing '--', no command, -n below 1), in one line.
#include <fcntl.h>
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "braid/status.h"
#include "tools/command_line.h"
#include "tools/launch/process_set.h"
#include "tools/launch/rank_output.h"

DEFINE_int32(n, 0, "number of local ranks to start (at least 1)");
DEFINE_string(rendezvous, "",
              "where the ranks meet (file:///DIR or redis://HOST:PORT); default: a fresh private "
              "directory under $TMPDIR, removed at exit");
DEFINE_double(timeout, 0, "stop the job after this many seconds and exit 124 (0: no limit)");
DEFINE_double(grace_seconds, 5, "seconds between SIGTERM and SIGKILL when stopping the ranks");

extern char** environ;

namespace braid {
namespace {

constexpr char kUsage[] =
    "braid_launch -n N [--rendezvous URL] [--timeout SECONDS] [--grace-seconds 5] -- COMMAND "
    "ARGS...";
constexpr int kHistoryLines = 20;
constexpr int kExitTimedOut = 124;

using Clock = std::chrono::steady_clock;

// Signals become bytes on this pipe, read by the poll loop (the self-pipe trick).
int signal_pipe[2] = {-1, -1};

void OnSignal(int signal) {
  const int saved_errno = errno;
  const char byte = static_cast<char>(signal);
  if (write(signal_pipe[1], &byte, 1) < 0) {
    // The pipe is full: enough wake-ups are pending already.
  }
  errno = saved_errno;
}

void InstallSignalHandlers() {
  // Invariant: the system gives a launcher a pipe (no input reaches here).
  PCHECK(pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) == 0);
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaction(signal, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed output must not kill the launcher before its ranks
}

// A fresh private directory, removed with everything the ranks wrote in it.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    const char* tmp = getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/braid_launch.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw Error(Status::IoError("braid_launch: cannot create a rendezvous directory " + pattern +
                                  ": " + strerror(errno)));
    }
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct LaunchOptions {
  int ranks = 1;
  std::string rendezvous;
  std::vector<std::string> command;
  double timeout_seconds = 0;
  double grace_seconds = 5;
};

class Launcher {
 public:
  explicit Launcher(const LaunchOptions& options)
      : options_(options), output_(options.ranks, isatty(STDOUT_FILENO) != 0, kHistoryLines) {}

  // Starts the ranks, supervises them to the end and returns the launcher's exit status.
  int Run();

 private:
  void StartRanks();
  int PollTimeoutMs() const;
  void ReadSignals();
  void Read(int rank, RankStream stream);
  void HandleExits();
  void BeginStop(const std::string& why);
  void EnforceDeadlines();
  int ReportAndExitCode();

  const LaunchOptions options_;
  ProcessSet ranks_;
  JobOutput output_;
  Clock::time_point job_deadline_ = Clock::time_point::max();
  std::optional<Clock::time_point> kill_deadline_;  // set while stopping
  bool killed_ = false;                             // SIGKILL sent
  std::optional<int> first_failure_;                // rank index
  int interrupted_by_ = 0;                          // a signal to the launcher
  bool timed_out_ = false;
};

void Launcher::StartRanks() {
  const std::string world = std::to_string(options_.ranks);
  std::vector<std::string> base_env;
  for (char** var = environ; *var != nullptr; ++var) {
    const std::string entry(*var);
    if (entry.rfind("BRAID_RANK=", 0) == 0 || entry.rfind("BRAID_WORLD_SIZE=", 0) == 0 ||
        entry.rfind("BRAID_RENDEZVOUS=", 0) == 0 || entry.rfind("BRAID_PROGRESS=", 0) == 0) {
      continue;
    }
    base_env.push_back(entry);
  }
  for (int rank = 0; rank < options_.ranks; ++rank) {
    std::vector<std::string> argv = options_.command;
    argv.insert(argv.end(), {"--rank", std::to_string(rank), "--world_size", world, "--rendezvous",
                             options_.rendezvous});
    std::vector<std::string> env = base_env;
    env.insert(env.end(), {"BRAID_RANK=" + std::to_string(rank), "BRAID_WORLD_SIZE=" + world,
                           "BRAID_RENDEZVOUS=" + options_.rendezvous});
    // Rank 0 draws its progress line for the job when the launcher will show it (a terminal).
    if (rank == 0 && isatty(STDOUT_FILENO) != 0) env.push_back("BRAID_PROGRESS=1");
    ranks_.Spawn(argv, env);
  }
  VLOG(1) << "started " << options_.ranks << " ranks, rendezvous " << options_.rendezvous;
}

int Launcher::PollTimeoutMs() const {
  Clock::time_point deadline = job_deadline_;
  if (kill_deadline_ && !killed_) deadline = std::min(deadline, *kill_deadline_);
  if (deadline == Clock::time_point::max()) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left.count(), 60000)));
}

void Launcher::ReadSignals() {
  char bytes[64];
  ssize_t got;
  while ((got = read(signal_pipe[0], bytes, sizeof(bytes))) > 0) {
    for (ssize_t i = 0; i < got; ++i) {
      const int signal = bytes[i];
      if (signal == SIGCHLD) continue;  // HandleExits reaps
      if (interrupted_by_ != 0 && !killed_) {
        output_.Message("braid_launch: received " + SignalName(signal) +
                        " again; killing the ranks");
        ranks_.SignalAll(SIGKILL);
        killed_ = true;
        continue;
      }
      if (interrupted_by_ == 0) interrupted_by_ = signal;
      BeginStop("received " + SignalName(signal));
    }
  }
}

void Launcher::Read(int rank, RankStream stream) {
  const RankProcess& process = ranks_.rank(rank);
  const int fd = stream == RankStream::kStdout ? process.out_fd : process.err_fd;
  if (fd < 0) return;
  char buffer[64 << 10];
  for (;;) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got > 0) {
      output_.Feed(rank, stream, std::string_view(buffer, static_cast<size_t>(got)));
      if (!process.exited) return;  // more when poll says so; a reaped rank is drained now
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) return;
    output_.Finish(rank, stream);
    if (stream == RankStream::kStdout) ranks_.CloseOut(rank);
    if (stream == RankStream::kStderr) ranks_.CloseErr(rank);
    return;
  }
}

void Launcher::HandleExits() {
  for (const int rank : ranks_.Reap()) {
    // Whatever the rank started and left behind goes with it; its output is in the pipes now.
    ranks_.KillLeftovers(rank);
    Read(rank, RankStream::kStdout);
    Read(rank, RankStream::kStderr);
    ranks_.CloseOut(rank);
    ranks_.CloseErr(rank);
    const int status = ranks_.rank(rank).status;
    VLOG(1) << "rank " << rank << " " << DescribeWaitStatus(status);
    if (status == 0 || kill_deadline_) continue;
    first_failure_ = rank;
    BeginStop("rank " + std::to_string(rank) + " " + DescribeWaitStatus(status));
  }
}

void Launcher::BeginStop(const std::string& why) {
  if (kill_deadline_) return;
  kill_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(options_.grace_seconds));
  const int running = ranks_.running();
  if (running > 0) {
    output_.Message("braid_launch: " + why + "; stopping " + std::to_string(running) +
                    (running == 1 ? " rank" : " ranks"));
  }
  ranks_.SignalAll(SIGTERM);
}

void Launcher::EnforceDeadlines() {
  const Clock::time_point now = Clock::now();
  if (!kill_deadline_ && now >= job_deadline_) {
    timed_out_ = true;
    std::ostringstream seconds;
    seconds << options_.timeout_seconds;
    BeginStop("timed out after " + seconds.str() + " s");
  }
  if (kill_deadline_ && !killed_ && now >= *kill_deadline_) {
    if (ranks_.running() > 0) {
      output_.Message("braid_launch: ranks still running after SIGTERM; sending SIGKILL");
    }
    ranks_.SignalAll(SIGKILL);
    killed_ = true;
  }
}

int Launcher::ReportAndExitCode() {
  if (interrupted_by_ != 0) return 128 + interrupted_by_;
  if (timed_out_) return kExitTimedOut;
  if (!first_failure_) return 0;
  const int rank = *first_failure_;
  const int status = ranks_.rank(rank).status;
  const std::deque<std::string>& lines = output_.LastLines(rank);
  std::string report = "braid_launch: rank " + std::to_string(rank) + " failed first: it " +
                       DescribeWaitStatus(status);
  report += lines.empty() ? " without printing anything" : "; its last lines:";
  output_.Message(report);
  const std::string prefix = "  [rank " + std::to_string(rank) + "] ";
  for (const std::string& line : lines) output_.Message(prefix + line);
  return ExitCodeOfWaitStatus(status);
}

int Launcher::Run() {
  InstallSignalHandlers();
  if (options_.timeout_seconds > 0) {
    job_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(options_.timeout_seconds));
  }
  StartRanks();
  while (ranks_.running() > 0) {
    std::vector<pollfd> fds = {{signal_pipe[0], POLLIN, 0}};
    std::vector<std::pair<int, RankStream>> sources = {{-1, RankStream::kStdout}};
    for (int rank = 0; rank < ranks_.size(); ++rank) {
      const RankProcess& process = ranks_.rank(rank);
      if (process.out_fd >= 0) {
        fds.push_back({process.out_fd, POLLIN, 0});
        sources.push_back({rank, RankStream::kStdout});
      }
      if (process.err_fd >= 0) {
        fds.push_back({process.err_fd, POLLIN, 0});
        sources.push_back({rank, RankStream::kStderr});
      }
    }
    const int ready = poll(fds.data(), fds.size(), PollTimeoutMs());
    // Invariant: poll of the launcher's own descriptors does not fail.
    PCHECK(ready >= 0 || errno == EINTR) << "poll";
    for (size_t i = 1; ready > 0 && i < fds.size(); ++i) {
      if (fds[i].revents != 0) Read(sources[i].first, sources[i].second);
    }
    if (ready > 0 && fds[0].revents != 0) ReadSignals();
    HandleExits();
    EnforceDeadlines();
  }
  return ReportAndExitCode();
}

[[noreturn]] void BadFlags(const std::string& message) {
  std::cerr << "braid_launch: " << message << " (usage: " << kUsage << ")\n";
  std::exit(kExitBadFlags);
}

// Splits argv at the first "--": the launcher's flags before it, the command after.
LaunchOptions ParseFlags(int argc, char** argv) {
  int dashes = 1;
  while (dashes < argc && std::strcmp(argv[dashes], "--") != 0) ++dashes;
  const std::vector<std::string> positional = ParseCommandLine(dashes, argv, kUsage);
  if (dashes == argc) BadFlags("missing '--' before the command");
  if (!positional.empty()) BadFlags("unexpected argument '" + positional[0] + "' before '--'");
  if (dashes + 1 == argc) BadFlags("no command after '--'");
  if (gflags::GetCommandLineFlagInfoOrDie("n").is_default) BadFlags("-n N is missing");
  if (FLAGS_n < 1) BadFlags("-n must be at least 1, got " + std::to_string(FLAGS_n));
  if (!(FLAGS_timeout >= 0)) BadFlags("--timeout must be 0 or more seconds");
  if (!(FLAGS_grace_seconds >= 0)) BadFlags("--grace-seconds must be 0 or more");
  LaunchOptions options;
  options.ranks = FLAGS_n;
  options.rendezvous = FLAGS_rendezvous;
  options.command.assign(argv + dashes + 1, argv + argc);
  options.timeout_seconds = FLAGS_timeout;
  options.grace_seconds = FLAGS_grace_seconds;
  return options;
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  braid::LaunchOptions options = braid::ParseFlags(argc, argv);
  int exit_code = 1;
  const int tool_status = braid::RunTool("braid_launch", [&] {
    std::optional<braid::TemporaryDirectory> directory;
    if (options.rendezvous.empty()) {
      directory.emplace();
      options.rendezvous = "file://" + directory->path();
    }
    braid::Launcher launcher(options);
    exit_code = launcher.Run();
  });
  return tool_status != 0 ? tool_status : exit_code;
}
