// ProcessAllreduce: braid's one all-reduce across the processes of a job
// (runtime/dist/process_group.h), of several tensors at once. The data-parallel builder
// (runtime/models/data_parallel.h) puts the gradients that are ready one after another in the
// backward pass into one op (a bucket), so a step costs a few collectives instead of one per
// parameter. (Allreduce, ops/collective/allreduce_op.h, spans one process's devices.)
//
// Inputs: `tensors` (B) blobs of this process's replica 0, then the same B blobs of replica 1, and
// so on: input r * B + b is tensor b on local replica r. Every replica's tensor b has one shape;
// all are float32. Outputs: the inputs, in place.
//
// Engines, by the device the op runs on:
//   cpu (Gloo; every tensor in host memory): for each tensor, the local replicas are summed in
//     pairwise order (ops/collective/pairwise_sum.h, as Allreduce adds its inputs) into replica
//     0's; the B sums, packed into one buffer, are all-reduced across the processes of
//     CurrentProcessGroup() in one Gloo collective; every replica's tensors get the result. With
//     `average` each rank adds `weight` times the mean of its replicas instead, and the result is
//     divided by the sum of the ranks' weights (one more element of the buffer, summed in the same
//     collective): a weighted mean of the ranks' means. The default weight, the rank's replica
//     count, makes it the mean over the job's replicas, whatever number of devices each rank holds.
//   cuda (NCCL; replica r's tensors on one GPU, each replica on its own; the op on replica 0's
//     device): an NCCL communicator per tag over every replica of every process, one ncclAllReduce
//     per tensor and replica in NCCL groups; `average` is NCCL's mean over every replica, which is
//     the weighted mean above when every rank has as many replicas and the same weight (the
//     collective-order check refuses cuda ranks that differ in either). Sums in NCCL's order: not
//     bit-identical to the cpu engine (ops/collective/allreduce_op.h says by how much). NCCL has
//     no timeout here: a rank that fails before queueing leaves its peers waiting on their GPUs.
//     ops/collective/process_allreduce_op.cu.
//   sim: none (a sim device runs the cpu kernel, which refuses tensors that are not on the host).
//
// Arguments (one set for both engines):
//   tensors (int, >= 1, default 1): B, the tensors per replica.
//   tag (int, [0, 2^32 - 2^16)): Gloo's tag for this collective (the tags above are braid's own,
//     runtime/exec/process_collective_order.h). Collectives that may run at the same time
//     (independent ops of a `dag` net) must have distinct tags, and the same op must have the same
//     tag in every process: the data-parallel builder numbers them. Default: DefaultCollectiveTag
//     of output 0's name (runtime/exec/process_collective_order.h; FNV-1a, unique when the names
//     are, barring collisions). On cuda the tag also picks the NCCL communicator (one per tag), so
//     ops that never run at once may share one by sharing a tag.
//   algorithm (string): "ring" (default) or "halving_doubling": Gloo's; NCCL picks its own.
//   average (int): 1 for the mean instead of the sum.
//   weight (int, >= 1, default: inputs / tensors): this rank's weight in the mean (with `average`
//     only; the ranks' weights must add up to at most 2^24, checked when it runs). The
//     data-parallel builder gives every rank weight 1: each reads the same number of examples,
//     however many devices it splits them over.
//
// Errors: no current process group, tensors on a device the engine does not reduce, or a peer lost
// or timed out, throw braid::Error; the executor adds the net and op. The schema marks the op
// Collective and WaitsForOtherProcesses: it never takes a core gate while it waits for its peers,
// its net's first run is single-threaded, and a `dag` net runs these ops one at a time in net
// order, after every rank compared their lists (runtime/exec/process_collective_order.h).
//
// Thread safety: as any op (one run at a time).
#ifndef BRAID_OPS_COLLECTIVE_PROCESS_ALLREDUCE_OP_H_
#define BRAID_OPS_COLLECTIVE_PROCESS_ALLREDUCE_OP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/operator.h"
#include "runtime/dist/process_group.h"

namespace braid {

// The arguments, checked, as both engines read them. Throws braid::Error (InvalidArgument, naming
// the op) for a value out of range.
struct ProcessAllreduceArgs {
  int tensors = 1;   // B
  int replicas = 1;  // inputs / B
  uint32_t tag = 0;
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::kRing;
  bool average = false;
  int weight = 1;  // see the argument
};
ProcessAllreduceArgs ReadProcessAllreduceArgs(const OperatorDef& def);
// The key of the NCCL engine's communicator for `tag` (ops/collective/nccl_process_clique.h): one
// communicator per tag, as Gloo keeps one channel per tag. It names no device, so processes on
// different GPUs meet.
std::string ProcessAllreduceNcclKey(uint32_t tag);

// "ProcessAllreduce 'name'" (output 0 when unnamed), how the op's errors name it.
std::string ProcessAllreduceLabel(const OperatorDef& def);

// The Gloo engine (cpu devices).
class ProcessAllreduceOp final : public OperatorBase {
 public:
  ProcessAllreduceOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 private:
  // Checks every input: on the host, float32, replica 0's shape.
  void CheckInputs() const;
  // Sums each tensor's replicas into replica 0's.
  void SumLocally();
  // Returns the buffer to all-reduce and its *count of floats: replica 0's tensor itself (B = 1
  // without `average`), else packed_: replica 0's tensors end to end (with `average`, times
  // weight / replicas), then (with `average`) the weight.
  float* Pack(size_t* count);
  // Writes the all-reduced buffer, times `scale`, to every replica's tensors.
  void Unpack(const float* reduced, float scale);

  const ProcessAllreduceArgs a_;
  std::vector<float> packed_;  // see Pack; sized on the first run
};

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_PROCESS_ALLREDUCE_OP_H_
