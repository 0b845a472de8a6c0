// Add on CUDA devices (ops/math/add_op.h).
#include "ops/math/elementwise_op.cuh"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

struct AddCuda {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Add, kCuda, "", BinaryElementwiseCudaOp<AddCuda>);

}  // namespace braid
