#include "tools/plan_json.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "braid/status.h"

namespace braid {
namespace {

template <typename Strings>
std::string JsonStringArray(const Strings& strings) {
  std::string out = "[";
  bool first = true;
  for (const std::string& s : strings) {
    out += (first ? "" : ", ") + JsonQuoted(s);
    first = false;
  }
  return out + "]";
}

void AppendOps(const NetDef& net, std::ostringstream* out) {
  *out << "  \"ops\": [";
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    *out << (i == 0 ? "\n" : ",\n") << "    {\"type\": " << JsonQuoted(op.type())
         << ", \"inputs\": " << JsonStringArray(op.input())
         << ", \"outputs\": " << JsonStringArray(op.output())
         << ", \"control_inputs\": " << JsonStringArray(op.control_input()) << "}";
  }
  *out << (net.op_size() > 0 ? "\n  ],\n" : "],\n");
}

void AppendBlobs(const MemoryPlan& plan, std::ostringstream* out) {
  *out << "  \"blobs\": [";
  bool first = true;
  for (const ArenaPlan& arena : plan.arenas) {
    for (const BlobOffset& blob : arena.blobs) {
      *out << (first ? "\n" : ",\n") << "    {\"name\": " << JsonQuoted(blob.blob)
           << ", \"bytes\": " << blob.bytes << ", \"offset\": " << blob.offset << "}";
      first = false;
    }
  }
  *out << (first ? "],\n" : "\n  ],\n");
}

}  // namespace

std::string JsonQuoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;  // UTF-8 bytes pass through unchanged
        }
    }
  }
  return out + "\"";
}

std::string PlanJsonText(const PlanJson& json) {
  const NetDef& net = *json.net;
  const MemoryPlan& plan = *json.plan;
  char plan_ms[32];
  std::snprintf(plan_ms, sizeof(plan_ms), "%.6f", json.plan_ms);
  std::ostringstream out;
  out << "{\n  \"net\": " << JsonQuoted(net.name()) << ",\n  \"mode\": " << JsonQuoted(json.mode)
      << ",\n  \"executor\": " << JsonQuoted(json.executor) << ",\n";
  AppendOps(net, &out);
  out << "  \"external_inputs\": " << JsonStringArray(net.external_input()) << ",\n"
      << "  \"external_outputs\": " << JsonStringArray(net.external_output()) << ",\n";
  AppendBlobs(plan, &out);
  out << "  \"arena_bytes\": " << plan.arena_bytes()
      << ",\n  \"naive_bytes\": " << plan.naive_bytes()
      << ",\n  \"lower_bound_bytes\": " << plan.lower_bound_bytes()
      << ",\n  \"plan_ms\": " << plan_ms << "\n}\n";
  return out.str();
}

void WritePlanJson(const PlanJson& json, const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(Status::IoError("cannot open '" + path + "' to write the plan JSON"));
  file << PlanJsonText(json);
  file.close();
  if (!file) throw Error(Status::IoError("failed writing the plan JSON to '" + path + "'"));
}

}  // namespace braid
