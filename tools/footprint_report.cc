#include "tools/footprint_report.h"

#include <cstdio>
#include <utility>

#include "runtime/core/device.h"

namespace braid {
namespace {

std::vector<std::pair<const char*, int64_t>> Rows(const DeviceFootprint& f) {
  return {{"parameters", f.parameters},
          {"gradients", f.gradients},
          {"momentum", f.momentum},
          {"other", f.other},
          {"arena", f.arena},
          {"cached", f.cached},
          {"rounding", f.rounding},
          {"workspace", f.workspace_on_device ? f.workspace_cap : 0},
          {"total", f.total_bytes()}};
}

std::string Line(const char* label, int64_t bytes, const char* note) {
  char line[160];
  std::snprintf(line, sizeof(line), "  %-11s %14lld B %11.2f MiB%s\n", label,
                static_cast<long long>(bytes), bytes / 1048576.0, note);
  return line;
}

}  // namespace

std::string FootprintTable(const std::vector<DeviceFootprint>& devices) {
  std::string out;
  for (const DeviceFootprint& f : devices) {
    out += "footprint on " + DeviceFromProto(f.device).ToString() +
           " (what its caching allocator will hold):\n";
    for (const auto& [label, bytes] : Rows(f)) {
      std::string note;
      if (std::string(label) == "arena" && f.test_growth > 0) {
        note = "  (test net grows it by " + std::to_string(f.test_growth) + " B)";
      } else if (std::string(label) == "rounding") {
        note = "  (" + std::to_string(f.small_segments) + " small 2 MiB segments)";
      } else if (std::string(label) == "workspace" && !f.workspace_on_device) {
        note = "  (cap " + std::to_string(f.workspace_cap) + " B: host scratch on sim, not counted)";
      } else if (std::string(label) == "workspace") {
        note = "  (cap: the largest chosen algorithm's)";
      }
      out += Line(label, bytes, note.c_str());
    }
    if (f.unsized_blobs > 0) {
      out += "  note: " + std::to_string(f.unsized_blobs) +
             " blobs have no size from shape inference and are not counted\n";
    }
  }
  return out;
}

std::string FootprintJson(const std::vector<DeviceFootprint>& devices) {
  std::string out = "{\"devices\": [";
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceFootprint& f = devices[i];
    out += (i ? ", {" : "{") + std::string("\"device\": \"") +
           DeviceFromProto(f.device).ToString() + "\"";
    for (const auto& [label, bytes] : Rows(f)) {
      out += ", \"" + std::string(label) + "\": " + std::to_string(bytes);
    }
    out += ", \"test_growth\": " + std::to_string(f.test_growth) +
           ", \"workspace_cap\": " + std::to_string(f.workspace_cap) +
           ", \"workspace_on_device\": " + (f.workspace_on_device ? "true" : "false") +
           ", \"small_segments\": " + std::to_string(f.small_segments) +
           ", \"unsized_blobs\": " + std::to_string(f.unsized_blobs) + "}";
  }
  return out + "]}\n";
}

}  // namespace braid
