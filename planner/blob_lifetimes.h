// Lifetimes of a net's recyclable blobs, and which pairs of them may share memory.
//
// Happens-before between ops is reachability in the dataflow DAG (planner/dataflow.h) for the dag
// executor, and listed order for the simple executor. Blob a precedes blob b when every op touching
// a (reading or writing it) happens before every op writing b: then b is born only after a is dead,
// on every schedule. a dies in place into b at op k when k reads a and writes b as a pair its
// schema allows, both have the same size, every other op touching a happens before k and k happens
// before every other op touching b; they may then share memory only at one offset. Which blobs are
// recyclable: planner/memory_plan.h.
//
//   BlobLifetimes lifetimes(net, request);
//   if (lifetimes.Precedes(a, b)) ...   // a and b may overlap anywhere
//
// Immutable after construction; thread-safe to read.
#ifndef BRAID_PLANNER_BLOB_LIFETIMES_H_
#define BRAID_PLANNER_BLOB_LIFETIMES_H_

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "planner/bitset.h"
#include "planner/memory_plan.h"
#include "proto/braid.pb.h"

namespace braid {

struct BlobLifetime {
  std::string name;
  int64_t bytes = 0;         // rounded up to the request's alignment
  int64_t raw_bytes = 0;     // as the request gives it
  int device = 0;            // index into BlobLifetimes::devices()
  std::vector<int> writes;   // ops writing the blob, ascending
  std::vector<int> touches;  // ops reading or writing it, ascending
};

class BlobLifetimes {
 public:
  BlobLifetimes(const NetDef& net, const PlanRequest& request);

  // Recyclable blobs, ordered by first write.
  const std::vector<BlobLifetime>& blobs() const { return blobs_; }
  int num_blobs() const { return static_cast<int>(blobs_.size()); }
  const std::vector<DeviceOption>& devices() const { return devices_; }
  // by_device[d]: the blobs on devices()[d], ascending (one arena's worth).
  std::vector<std::vector<int>> BlobsByDevice() const;
  // Every op touching a happens before every op writing b.
  bool Precedes(int a, int b) const { return precedes_[a].Test(b); }
  const Bitset& Successors(int a) const { return precedes_[a]; }
  // (a, b) pairs where a dies in place into b and a does not precede b; ascending.
  const std::vector<std::pair<int, int>>& inplace() const { return inplace_; }

 private:
  void CollectBlobs(const NetDef& net, const PlanRequest& request);
  void ComputePrecedence(const std::vector<Bitset>& after);
  void FindInplacePairs(const NetDef& net, const PlanRequest& request,
                        const std::vector<Bitset>& after);

  std::vector<BlobLifetime> blobs_;
  std::vector<DeviceOption> devices_;
  std::vector<Bitset> precedes_;
  std::vector<std::pair<int, int>> inplace_;
};

// after[i]: the ops op i happens before, under `executor`'s schedules.
std::vector<Bitset> HappensBefore(const NetDef& net, PlanExecutor executor);

}  // namespace braid

#endif  // BRAID_PLANNER_BLOB_LIFETIMES_H_
