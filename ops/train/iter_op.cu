// Iter on CUDA devices (ops/train/iter_op.h): the int64 counter stays on the GPU and one thread
// increments it, so the host never reads it.
//
// Differences from the CPU kernel, which throws when the counter would pass INT64_MAX: a kernel
// cannot throw, so here the counter stays at INT64_MAX (it never wraps to negative).
// A counter that was never written starts from 0, as on the CPU. For the form without an input,
// whose output the launcher sizes (and so gives storage) before the first run, "never written"
// means the blob had no storage when the op was built.
#include <limits>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/train/iter_op.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

// fresh: the counter holds no value yet and becomes 1.
__global__ void IterKernel(int64_t* counter, bool fresh) {
  if (fresh) {
    *counter = 1;
  } else if (*counter != std::numeric_limits<int64_t>::max()) {
    ++*counter;
  }
}

class IterCudaOp final : public OperatorBase {
 public:
  IterCudaOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), unwritten_at_build_(!Output(0)->has_storage()) {}

  void Run() override {
    Tensor* counter = Output(0);
    // A counter without storage has an unknown shape, so the launcher runs this op synchronously
    // (not under FixedTensorsScope) and it may size its output itself.
    bool fresh = !counter->has_storage();
    if (fresh) counter->Resize(DType::kInt64, {1});
    fresh = fresh || (InputSize() == 0 && first_run_ && unwritten_at_build_);
    first_run_ = false;
    IterCounterShape(def(), {ShapeOf(*counter)});
    IterKernel<<<1, 1, 0, CurrentCudaStream()>>>(counter->mutable_data<int64_t>(), fresh);
    CheckCudaLaunch("IterKernel");
  }

 private:
  const bool unwritten_at_build_;
  bool first_run_ = true;
};

}  // namespace

BRAID_REGISTER_OPERATOR(Iter, kCuda, "", IterCudaOp);

}  // namespace braid
