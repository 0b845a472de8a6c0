#include "ops/tensor/int_list_input.h"

#include "ops/common/op_checks.h"

namespace braid {

std::vector<int64_t> ReadIntList(const OperatorBase& op, int i) {
  CheckInputType(op, i, {DType::kInt32, DType::kInt64});
  const Tensor& input = op.Input(i);
  if (input.ndim() != 1) ThrowInvalidArgument("input " + DescribeInput(op, i) + " must be 1-D");
  // A CUDA device's memory is not host-addressable: copy the list out. Ops reading one run
  // synchronously after their parents (their output shapes depend on it:
  // runtime/exec/launch_plan.h).
  Tensor host_copy;
  if (input.device().type == DeviceType::kCuda) host_copy.CopyFrom(input);
  const Tensor& t = input.device().type == DeviceType::kCuda ? host_copy : input;
  std::vector<int64_t> values(t.numel());
  for (int64_t k = 0; k < t.numel(); ++k) {
    values[k] = t.dtype() == DType::kInt64 ? t.data<int64_t>()[k] : t.data<int32_t>()[k];
  }
  return values;
}

}  // namespace braid
