// Reshape on CUDA devices (ops/tensor/reshape_op.h): the data is copied on the current stream and
// old_shape written by a kernel (no host buffer to keep alive). With a new_shape input the op runs
// synchronously and the shape is copied to the host (ops/tensor/int_list_input.h).
#include "ops/common/cuda_elementwise.cuh"
#include "ops/tensor/reshape_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class ReshapeCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    const std::vector<int64_t> old_dims = ReshapeData(*this);
    int64_t* old_shape =
        Output(1, DType::kInt64, {static_cast<int64_t>(old_dims.size())})->mutable_data<int64_t>();
    WriteValuesAsync(old_dims, old_shape);
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Reshape, kCuda, "", ReshapeCudaOp);

}  // namespace braid
