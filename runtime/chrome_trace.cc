#include "runtime/chrome_trace.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "runtime/net.h"
#include "runtime/status.h"

namespace braid {
namespace {

std::string JsonEscaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void ChromeTraceWriter::OnRunEnd(const Net& net, const std::vector<OpEvent>& events) {
  std::lock_guard<std::mutex> lock(mu_);
  if (max_runs_ >= 0 && runs_ >= max_runs_) return;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!events[i].ran()) continue;
    const OperatorDef& op = net.def().op(static_cast<int>(i));
    std::string name = op.name().empty() ? op.type() + " #" + std::to_string(i) : op.name();
    entries_.push_back(
        {name, op.type(), events[i].start_ns, events[i].end_ns, events[i].thread, runs_});
  }
  ++runs_;
}

std::string ChromeTraceWriter::Json() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t origin = entries_.empty() ? 0 : entries_.front().start_ns;
  for (const Entry& e : entries_) origin = std::min(origin, e.start_ns);
  std::ostringstream out;
  out << "{\"traceEvents\":[";
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    char times[96];
    std::snprintf(times, sizeof(times), "\"ts\":%.3f,\"dur\":%.3f", (e.start_ns - origin) / 1e3,
                  (e.end_ns - e.start_ns) / 1e3);
    out << (i ? "," : "") << "{\"name\":\"" << JsonEscaped(e.name) << "\",\"cat\":\""
        << JsonEscaped(e.category) << "\",\"ph\":\"X\"," << times
        << ",\"pid\":0,\"tid\":" << e.thread << ",\"args\":{\"run\":" << e.run << "}}";
  }
  out << "],\"displayTimeUnit\":\"ms\"}\n";
  return out.str();
}

void ChromeTraceWriter::WriteFile(const std::string& path) const {
  std::ofstream file(path);
  file << Json();
  if (!file) throw Error(Status::IoError("cannot write trace file '" + path + "'"));
}

}  // namespace braid
