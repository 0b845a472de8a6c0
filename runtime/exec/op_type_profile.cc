#include "runtime/exec/op_type_profile.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "runtime/exec/net.h"

namespace braid {

void OpTypeProfile::OnRunEnd(const Net& net, const std::vector<OpEvent>& events) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < events.size(); ++i) {
    if (!events[i].ran()) continue;
    Totals& t = by_type_[net.def().op(static_cast<int>(i)).type()];
    ++t.count;
    t.total_ns += events[i].end_ns - events[i].start_ns;
  }
}

std::string OpTypeProfile::Table() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, Totals>> rows(by_type_.begin(), by_type_.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.total_ns > b.second.total_ns; });
  int64_t all_ns = 0;
  for (const auto& row : rows) all_ns += row.second.total_ns;
  std::ostringstream out;
  char line[160];
  std::snprintf(line, sizeof(line), "%-24s %10s %12s %12s %8s\n", "op type", "count", "total ms",
                "mean us", "share");
  out << line;
  for (const auto& [type, t] : rows) {
    std::snprintf(line, sizeof(line), "%-24s %10lld %12.3f %12.3f %7.1f%%\n", type.c_str(),
                  static_cast<long long>(t.count), t.total_ns / 1e6,
                  t.total_ns / 1e3 / std::max<int64_t>(t.count, 1),
                  all_ns ? 100.0 * t.total_ns / all_ns : 0.0);
    out << line;
  }
  return out.str();
}

}  // namespace braid
