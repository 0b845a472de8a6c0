// The dataflow DAG of a net: which ops must finish before which.
//
// BuildDataflow is braid's one dependency function. Every executor schedules with it and the memory
// planner reasons with it, so they cannot disagree about what may run concurrently. Op j depends on
// an earlier op i when, on some blob b:
//   - read-after-write:  i writes b, j reads b (or names b in control_input) and i is b's last
//   writer;
//   - write-after-read:  j writes b and i read b since b's last write;
//   - write-after-write: j writes b and i is b's last writer.
// Ops are numbered by their position in NetDef.op; every edge points from a lower to a higher
// index, so the listed order is always a valid schedule. Edges are deduplicated and sorted.
//
// Pure function; thread-safe.
#ifndef BRAID_PLANNER_DATAFLOW_H_
#define BRAID_PLANNER_DATAFLOW_H_

#include <set>
#include <string>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

struct DataflowGraph {
  // parents[j]: ops that must finish before op j starts. children[i]: the reverse.
  std::vector<std::vector<int>> parents;
  std::vector<std::vector<int>> children;

  int num_ops() const { return static_cast<int>(parents.size()); }
};

DataflowGraph BuildDataflow(const NetDef& net);

// Every blob name the net mentions: external inputs and outputs, and its ops' inputs, outputs and
// control inputs.
std::set<std::string> BlobNamesIn(const NetDef& net);

}  // namespace braid

#endif  // BRAID_PLANNER_DATAFLOW_H_
