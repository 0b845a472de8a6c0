#include "tools/launch/rank_output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

namespace braid {
namespace {

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;  // a closed or broken output: nothing more to do with it
    bytes.remove_prefix(static_cast<size_t>(written));
  }
}

std::string Prefix(int rank) { return "[rank " + std::to_string(rank) + "] "; }

// Columns of the launcher's terminal, or 0 when unknown.
size_t TerminalColumns() {
  winsize size{};
  return ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
}

}  // namespace

void LineSplitter::ApplyCarriageReturn() {
  pending_cr_ = false;
  progress_ = true;
  if (!current_.empty()) shown_ = current_;
  current_.clear();
}

void LineSplitter::EndLine(std::vector<Event>* events) {
  if (progress_) {
    events->push_back({Event::kProgressEnd, ProgressText()});
  } else {
    events->push_back({Event::kLine, current_});
  }
  current_.clear();
  shown_.clear();
  last_reported_.clear();
  progress_ = pending_cr_ = false;
}

void LineSplitter::Feed(std::string_view bytes, std::vector<Event>* events) {
  for (const char c : bytes) {
    if (c == '\n') {
      pending_cr_ = false;  // "\r\n" ends a line like '\n'
      EndLine(events);
      continue;
    }
    if (pending_cr_) ApplyCarriageReturn();
    if (c == '\r') {
      pending_cr_ = true;
      continue;
    }
    current_.push_back(c);
    if (current_.size() >= kMaxLineBytes) {
      if (progress_) {
        current_.pop_back();
      } else {
        EndLine(events);
      }
    }
  }
  if (progress_ && ProgressText() != last_reported_) {
    last_reported_ = ProgressText();
    events->push_back({Event::kProgress, last_reported_});
  }
}

void LineSplitter::Finish(std::vector<Event>* events) {
  if (pending_cr_ && !progress_) pending_cr_ = false;  // "text\r" then the end: a line
  if (pending_cr_) ApplyCarriageReturn();
  if (progress_ || !current_.empty()) EndLine(events);
}

JobOutput::JobOutput(int ranks, bool progress_on_terminal, int history_lines)
    : progress_on_terminal_(progress_on_terminal),
      history_lines_(static_cast<size_t>(history_lines)),
      splitters_(2 * static_cast<size_t>(ranks)),
      history_(static_cast<size_t>(ranks)) {}

void JobOutput::Feed(int rank, RankStream stream, std::string_view bytes) {
  std::vector<LineSplitter::Event> events;
  splitters_[2 * rank + static_cast<int>(stream)].Feed(bytes, &events);
  Handle(rank, stream, events);
}

void JobOutput::Finish(int rank, RankStream stream) {
  std::vector<LineSplitter::Event> events;
  splitters_[2 * rank + static_cast<int>(stream)].Finish(&events);
  Handle(rank, stream, events);
}

void JobOutput::Handle(int rank, RankStream stream,
                       const std::vector<LineSplitter::Event>& events) {
  const bool shows_progress = rank == 0 && progress_on_terminal_;
  for (const LineSplitter::Event& event : events) {
    switch (event.kind) {
      case LineSplitter::Event::kLine:
        Remember(rank, event.text);
        PrintLine(stream == RankStream::kStdout ? STDOUT_FILENO : STDERR_FILENO,
                  Prefix(rank) + event.text);
        break;
      case LineSplitter::Event::kProgress:
        if (!shows_progress) break;
        progress_ = event.text;
        DrawProgress();
        break;
      case LineSplitter::Event::kProgressEnd:
        Remember(rank, event.text);
        if (!shows_progress) break;
        progress_ = event.text;
        DrawProgress();
        WriteAll(STDOUT_FILENO, "\n");
        progress_.clear();
        break;
    }
  }
}

void JobOutput::Message(const std::string& line) { PrintLine(STDERR_FILENO, line); }

void JobOutput::PrintLine(int fd, const std::string& line) {
  const bool redraw = !progress_.empty();
  if (redraw) ClearProgress();
  WriteAll(fd, line + "\n");
  if (redraw) DrawProgress();
}

void JobOutput::DrawProgress() {
  std::string line = Prefix(0) + progress_;
  const size_t columns = TerminalColumns();
  if (columns > 1 && line.size() >= columns) line.resize(columns - 1);
  WriteAll(STDOUT_FILENO, "\r" + line + "\033[K");
}

void JobOutput::ClearProgress() { WriteAll(STDOUT_FILENO, "\r\033[K"); }

void JobOutput::Remember(int rank, const std::string& line) {
  std::deque<std::string>& lines = history_[rank];
  lines.push_back(line);
  while (lines.size() > history_lines_) lines.pop_front();
}

}  // namespace braid
