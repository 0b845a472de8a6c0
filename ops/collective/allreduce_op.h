// Allreduce: every input is the same blob on another device; each becomes the sum (or, with
// `average`, the mean) of all of them, in place. The data-parallel builder inserts one per
// parameter gradient, with the gradient of every device as inputs.
//
// The CPU kernel (devices of one process share memory) reduces and broadcasts in one pass: each
// thread of the op's OpenMP team takes a range of elements, sums it across the inputs and writes
// the sum to every output. One op spans every device, so the dag executor cannot run the devices'
// parts of a collective in different orders: there is nothing to match up and nothing to deadlock.
// NCCL (CUDA devices, engine "NCCL") and Gloo (processes, engine "GLOO") kernels register under the
// same schema.
//
// Schema: Collective, inputs and outputs pairwise in place, float32, identical shapes (checked).
#ifndef BRAID_OPS_COLLECTIVE_ALLREDUCE_OP_H_
#define BRAID_OPS_COLLECTIVE_ALLREDUCE_OP_H_

#include <vector>

#include "runtime/operator.h"

namespace braid {

class AllreduceOp final : public OperatorBase {
 public:
  AllreduceOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 private:
  float scale_ = 1.f;             // 1 / inputs when averaging
  std::vector<const float*> in_;  // per run; sized once here, so Run allocates nothing
  std::vector<float*> out_;
};

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_ALLREDUCE_OP_H_
