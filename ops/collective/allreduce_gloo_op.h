// Allreduce on engine "GLOO": the Allreduce schema (ops/collective/allreduce_op.h) across the
// processes of a job (runtime/process_group.h), hierarchically: this process's inputs (its device
// replicas, host memory) are summed locally in input order, input 0's sum is all-reduced across
// the processes of CurrentProcessGroup(), and the result is written to every input, in place. With
// `average` the result is divided by (local inputs x world size).
//
// Arguments:
//   tag (int, [0, 2^32)): Gloo's tag for this collective. Collectives that may run at the same time
//     (independent Allreduce ops of a `dag` net) must have distinct tags, and the same op must have
//     the same tag in every process: the net builder (the data-parallel builder) assigns them.
//     Default: the 32-bit FNV-1a hash of output 0's name (unique when the names are, barring
//     collisions; set `tag` explicitly to be sure).
//   algorithm (string): "ring" (default) or "halving_doubling".
//   average (int): 1 for the mean instead of the sum.
//
// Errors: no current process group, or a peer lost or timed out, throw braid::Error; the executor
// adds the net and op.
//
// Thread safety: as any op (one run at a time); different ops run concurrently with their tags.
#ifndef BRAID_OPS_COLLECTIVE_ALLREDUCE_GLOO_OP_H_
#define BRAID_OPS_COLLECTIVE_ALLREDUCE_GLOO_OP_H_

#include <cstdint>
#include <string>

#include "runtime/operator.h"
#include "runtime/process_group.h"

namespace braid {

// The default tag of a GLOO collective: FNV-1a (32 bits) of `name`.
uint32_t DefaultCollectiveTag(const std::string& name);

class AllreduceGlooOp final : public OperatorBase {
 public:
  AllreduceGlooOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 private:
  // Checks every input and sums them into input 0.
  void SumLocally();
  // Scales input 0 (when averaging) and copies it to every other input.
  void Broadcast(float scale);

  uint32_t tag_ = 0;
  AllreduceAlgorithm algorithm_ = AllreduceAlgorithm::kRing;
  bool average_ = false;
};

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_ALLREDUCE_GLOO_OP_H_
