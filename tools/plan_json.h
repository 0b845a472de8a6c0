// The JSON form of a memory plan that braid_plan --json writes, for tools outside braid.
//
// Exactly these keys, in this order (no others):
//   {"net": str, "mode": str, "executor": str,
//    "ops": [{"type": str, "inputs": [str], "outputs": [str], "control_inputs": [str]}],
//    "external_inputs": [str], "external_outputs": [str],
//    "blobs": [{"name": str, "bytes": int, "offset": int}],
//    "arena_bytes": int, "naive_bytes": int, "lower_bound_bytes": int, "plan_ms": float}
// "ops" is the net that was planned, in order, with its original blob names. "blobs" lists every
// recycled blob of every arena, arena by arena; offsets are from the start of the blob's own
// arena (one per device), and the byte totals are sums over the arenas. Blobs not listed keep
// their own storage. Strings are escaped per RFC 8259 (quotes, backslashes, control characters).
//
//   PlanJson json{.net = &net, .mode = "training", .executor = "dag", .plan = &plan};
//   json.plan_ms = 3.2;
//   WritePlanJson(json, "plan.json");  // throws braid::Error naming the file
//
// Pure functions; thread-safe.
#ifndef BRAID_TOOLS_PLAN_JSON_H_
#define BRAID_TOOLS_PLAN_JSON_H_

#include <string>

#include "planner/memory_plan.h"
#include "proto/braid.pb.h"

namespace braid {

struct PlanJson {
  const NetDef* net = nullptr;  // the planned net; its name is "net"
  std::string mode;             // "inference" or "training"
  std::string executor;         // "dag" or "simple"
  const MemoryPlan* plan = nullptr;
  double plan_ms = 0;
};

// `text` as a JSON string literal, quotes included.
std::string JsonQuoted(const std::string& text);
// The document, on several lines, ending with a newline.
std::string PlanJsonText(const PlanJson& json);
// Writes PlanJsonText to `path`; throws braid::Error (IoError) naming it on failure.
void WritePlanJson(const PlanJson& json, const std::string& path);

}  // namespace braid

#endif  // BRAID_TOOLS_PLAN_JSON_H_
