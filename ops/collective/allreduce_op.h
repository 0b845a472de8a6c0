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
// The NCCL kernel (CUDA devices, engine "NCCL") registers under the same schema; across processes,
// ProcessAllreduce (ops/collective/process_allreduce_op.h) reduces with Gloo.
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
//   average (int): 1 for the mean instead of the sum (over every input of every process).
//   processes (int, engine "NCCL" only): 1 spans the processes of CurrentProcessGroup() (none set:
//     FailedPrecondition naming the op). The inputs are this process's devices; every process must
//     have as many (checked when the communicator is made). NCCL rank of local device i of group
//     rank g: g x local devices + i. Default 0: this process's devices only.
//   key (string, with processes: 1): names the communicator across processes, one per (device
//     set, key), made on the op's first run with the unique id rank 0 shares through the group's
//     store (ops/collective/nccl_process_clique.h). Ops that may run at the same time need
//     distinct keys, and every process must first run them in the same order. Default: output 0.
//
// Schema: Collective, inputs and outputs pairwise in place, float32, identical shapes (checked).
//
// Thread safety: as any op (one run at a time). Ops with processes: 1 that may run at once need
// distinct keys (above); NCCL's cross-process collectives are not ordered or checked across ranks
// as ProcessAllreduce's are (runtime/exec/process_collective_order.h).
#ifndef BRAID_OPS_COLLECTIVE_ALLREDUCE_OP_H_
#define BRAID_OPS_COLLECTIVE_ALLREDUCE_OP_H_

#include <vector>

#include "runtime/core/operator.h"
#include "runtime/device/collective.h"

namespace braid {

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
