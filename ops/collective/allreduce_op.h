// Allreduce: every input is the same blob on another device; each becomes the sum (or, with
// `average`, the mean) of all of them, in place. The data-parallel builder inserts one per
// parameter gradient, with the gradient of every device as inputs.
//
// On cpu devices (one process's memory) the op reduces and broadcasts in one pass on the host: each
// thread of its OpenMP team takes a range of elements, sums it across the inputs and writes the sum
// to every output. On asynchronous devices (sim) it runs as one kernel per device
// (runtime/device/collective.h): rank r waits until every rank's input is ready, sums the r-th of n
// equal slices of the elements across all inputs into every output (reading its peers' memory, as
// NCCL does over NVLink), and waits until every rank has written its slice. Both add the inputs in
// pairwise order for every element (ops/collective/pairwise_sum.h), so cpu and sim give the same
// bits whichever way the work is split, and a job of two processes of L devices each (L a power of
// two) adds as one process with 2L devices does. On CUDA, see "What holds" below.
// The NCCL kernel (CUDA devices, engine "NCCL") registers under the same schema. Across
// processes, ProcessAllreduce (ops/collective/process_allreduce_op.h) reduces, with Gloo or NCCL.
//
// What holds, engine by engine (runtime/device/collective.h ChooseCollectiveEngine picks one):
//   cpu, sim   every element in PairwiseSum's order over the inputs in rank order
//              (ops/collective/pairwise_sum.h), then times 1/n with `average`: cpu and sim give
//              the same bits, however the work is split across threads or ranks.
//   braid's device-side all-reduce (CUDA ranks that share one physical GPU, logical GPUs:
//              ops/collective/device_allreduce.h)   the same order and the same multiply by 1/n:
//              the same bits as cpu and sim.
//   NCCL (CUDA ranks on distinct physical GPUs)   NCCL's own ring or tree order, which depends on
//              the topology, the message size and the NCCL version: the sum is not bit-identical
//              to the cpu pass (it differs by the rounding of another order, a few ulps of the
//              terms' magnitude). `average` is ncclAvg, which for float32 multiplies every input by
//              float(1/n) before summing (NCCL's PreMulSum), where the cpu pass sums first and
//              multiplies the sum once: for n a power of two the scaling is exact and only the
//              order differs; otherwise each term carries one more rounding.
//
// Arguments:
//   average (int): 1 for the mean instead of the sum (over every input).
//   processes (int): refused unless 0 (it once made the NCCL kernel span processes; that is
//     ProcessAllreduce's job now): the error says so, where ignoring it would give numbers that
//     are not all-reduced across the processes.
//
// Schema: Collective, inputs and outputs pairwise in place, float32, identical shapes (checked).
//
// Thread safety: as any op (one run at a time).
#ifndef BRAID_OPS_COLLECTIVE_ALLREDUCE_OP_H_
#define BRAID_OPS_COLLECTIVE_ALLREDUCE_OP_H_

#include <vector>

#include "runtime/core/operator.h"
#include "runtime/device/collective.h"

namespace braid {

// Throws braid::Error (InvalidArgument) when `def` asks for `processes` (see the argument); both
// kernels call it.
void RefuseProcessesArgument(const OperatorDef& def);

class AllreduceOp final : public OperatorBase, public CollectiveOp {
 public:
  AllreduceOp(const OperatorDef& def, Workspace* ws);
  void Run() override;
  std::vector<Device> RankDevices() const override;
  void RunRank(int rank, CollectiveRendezvous& peers) override;

 private:
  // Checks input i and takes its pointers into in_ and out_.
  void Bind(int i);
  // Sums elements [begin, end) over the inputs into every output.
  void Reduce(int64_t begin, int64_t end);

  float scale_ = 1.f;             // 1 / inputs when averaging
  std::vector<const float*> in_;  // per run; sized once here, so Run allocates nothing
  std::vector<float*> out_;
};

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_ALLREDUCE_OP_H_
