#include "runtime/exec/chrome_trace.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "braid/status.h"
#include "runtime/exec/net.h"

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

int ChromeTraceWriter::ProcessOf(const Device& device) {
  if (processes_.empty()) processes_.push_back("host");
  const std::string name = device.is_host() ? "host" : device.ToString();
  for (size_t p = 0; p < processes_.size(); ++p) {
    if (processes_[p] == name) return static_cast<int>(p);
  }
  processes_.push_back(name);
  return static_cast<int>(processes_.size()) - 1;
}

void ChromeTraceWriter::Add(std::string name, const std::string& category, int64_t start_ns,
                            int64_t end_ns, int pid, int tid) {
  entries_.push_back({std::move(name), category, start_ns, end_ns, pid, tid, runs_});
}

void ChromeTraceWriter::OnRunEnd(const Net& net, const std::vector<OpEvent>& events) {
  std::lock_guard<std::mutex> lock(mu_);
  if (max_runs_ >= 0 && runs_ >= max_runs_) return;
  for (size_t i = 0; i < events.size(); ++i) {
    const OpEvent& e = events[i];
    const OperatorDef& op = net.def().op(static_cast<int>(i));
    std::string name = op.name().empty() ? op.type() + " #" + std::to_string(i) : op.name();
    if (!e.launched()) {
      if (e.ran()) Add(name, op.type(), e.start_ns, e.end_ns, ProcessOf(Device{}), e.thread);
      continue;
    }
    const int device = ProcessOf(e.device);
    if (e.launch_end_ns >= 0) {
      Add("launch " + name, "launch", e.launch_start_ns, e.launch_end_ns, 0, e.launch_thread);
    }
    if (e.wait.start_ns >= 0) Add("wait " + name, "wait", e.wait.start_ns, e.wait.end_ns, device,
                                   e.stream);
    if (e.ran()) Add(name, op.type(), e.start_ns, e.end_ns, device, e.stream);
  }
  ++runs_;
}

std::string ChromeTraceWriter::Json() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t origin = entries_.empty() ? 0 : entries_.front().start_ns;
  for (const Entry& e : entries_) origin = std::min(origin, e.start_ns);
  std::ostringstream out;
  out << "{\"traceEvents\":[";
  const char* separator = "";
  std::set<std::pair<int, int>> tracks;
  for (const Entry& e : entries_) {
    char times[96];
    std::snprintf(times, sizeof(times), "\"ts\":%.3f,\"dur\":%.3f", (e.start_ns - origin) / 1e3,
                  (e.end_ns - e.start_ns) / 1e3);
    out << separator << "{\"name\":\"" << JsonEscaped(e.name) << "\",\"cat\":\""
        << JsonEscaped(e.category) << "\",\"ph\":\"X\"," << times << ",\"pid\":" << e.pid
        << ",\"tid\":" << e.tid << ",\"args\":{\"run\":" << e.run << "}}";
    separator = ",";
    tracks.insert({e.pid, e.tid});
  }
  for (size_t p = 0; p < processes_.size(); ++p) {
    out << separator << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << p
        << ",\"args\":{\"name\":\"" << JsonEscaped(processes_[p]) << "\"}}";
    separator = ",";
  }
  for (const auto& [pid, tid] : tracks) {
    out << separator << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << pid
        << ",\"tid\":" << tid << ",\"args\":{\"name\":\"" << (pid == 0 ? "thread " : "stream ")
        << tid << "\"}}";
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
