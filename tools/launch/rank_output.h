// The output of a braid_launch job: every rank's stdout and stderr, split into whole lines and
// printed with a "[rank R] " prefix, one progress line for the job, and each rank's last lines.
//
// Lines: bytes up to '\n' ("\r\n" counts as '\n'); a partial line is held until its '\n' arrives
// or its stream ends, so lines of different ranks never interleave. A line longer than 64 KiB is
// printed in 64 KiB pieces. A rank's stdout lines go to the launcher's stdout, stderr lines to its
// stderr.
//
// Progress lines (the rule): a line that contains '\r' is a progress line, as braid_train draws on
// a terminal; what follows its last '\r' is its current text. Only rank 0's progress lines are
// shown, and only when `progress_on_terminal` (the launcher's stdout is a terminal): redrawn in
// place on the launcher's stdout as "[rank 0] text", kept on screen when their '\n' arrives, and
// cleared and redrawn around every other line printed meanwhile. Otherwise, and for every other
// rank, progress lines are not printed; their final text (at '\n') still counts as a last line.
//
// Not thread-safe: the launcher's one thread feeds it. It writes to file descriptors 1 and 2.
//
//   JobOutput output(/*ranks=*/2, isatty(STDOUT_FILENO), /*history_lines=*/20);
//   output.Feed(1, RankStream::kStdout, "hello\nwor");  // prints "[rank 1] hello"
//   output.Finish(1, RankStream::kStdout);             // prints "[rank 1] wor"
#ifndef BRAID_TOOLS_LAUNCH_RANK_OUTPUT_H_
#define BRAID_TOOLS_LAUNCH_RANK_OUTPUT_H_

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace braid {

// Splits one stream into lines and progress updates (see the file comment).
class LineSplitter {
 public:
  struct Event {
    enum Kind { kLine, kProgress, kProgressEnd } kind;
    std::string text;
  };
  static constexpr size_t kMaxLineBytes = 64 << 10;

  // Appends the events that `bytes` complete; a progress line's current text is reported once
  // per call when it changed.
  void Feed(std::string_view bytes, std::vector<Event>* events);
  // The stream ended: its partial line, if any, as a line.
  void Finish(std::vector<Event>* events);

 private:
  void ApplyCarriageReturn();
  void EndLine(std::vector<Event>* events);
  const std::string& ProgressText() const { return current_.empty() ? shown_ : current_; }

  std::string current_;        // bytes since the last '\n' or acted-on '\r'
  std::string shown_;          // a progress line's last complete text
  std::string last_reported_;  // the progress text last reported
  bool progress_ = false;      // this line had a '\r'
  bool pending_cr_ = false;    // a '\r' not yet known to be part of "\r\n"
};

enum class RankStream { kStdout = 0, kStderr = 1 };

class JobOutput {
 public:
  JobOutput(int ranks, bool progress_on_terminal, int history_lines);

  void Feed(int rank, RankStream stream, std::string_view bytes);
  void Finish(int rank, RankStream stream);
  // The launcher's own line, on stderr.
  void Message(const std::string& line);
  // The rank's last lines (both streams in arrival order), oldest first.
  const std::deque<std::string>& LastLines(int rank) const { return history_[rank]; }

 private:
  void Handle(int rank, RankStream stream, const std::vector<LineSplitter::Event>& events);
  void PrintLine(int fd, const std::string& line);
  void DrawProgress();
  void ClearProgress();
  void Remember(int rank, const std::string& line);

  bool progress_on_terminal_;
  size_t history_lines_;
  std::vector<LineSplitter> splitters_;  // 2 per rank: stdout, stderr
  std::vector<std::deque<std::string>> history_;
  std::string progress_;  // rank 0's progress text on screen; empty: none
};

}  // namespace braid

#endif  // BRAID_TOOLS_LAUNCH_RANK_OUTPUT_H_
