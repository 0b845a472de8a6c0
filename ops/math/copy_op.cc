#include "ops/math/copy_op.h"

#include <algorithm>
#include <cstring>

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/device_context.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

GradientOps CopyGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return {{MakeGradientOp(r.op, "Copy", {r.output_grads[0]}, {r.input_grads[0]})}, {true}};
}

}  // namespace

void CopyOp::Run() {
  const Tensor& input = Input(0);
  CheckInputType(*this, 0, {input.dtype()});
  if (Output(0) == &input) return;
  Tensor* output = Output(0, input.dtype(), input.shape());
  output->ReserveStorage();
  auto* to = static_cast<char*>(output->storage()->data());      // any layout, any device
  const auto* from = static_cast<const char*>(input.storage()->data());
  const int64_t bytes = static_cast<int64_t>(input.nbytes());
  // Host and sim memory is host-addressable and copied here; a CUDA device's memory only through
  // its context, on the current stream (cudaMemcpyAsync, or a peer copy between GPUs).
  const bool host_addressable = output->device().type != DeviceType::kCuda;
  if (host_addressable && SameMemory(input.device(), output->device())) {
    ParallelFor((bytes + 3) / 4, [=](int64_t begin, int64_t end) {  // in 4-byte words
      std::memcpy(to + 4 * begin, from + 4 * begin, std::min(4 * end, bytes) - 4 * begin);
    });
  } else {  // the executor ordered the input's writer before this op, on the device or the host
    GetDeviceContext(device())->CopyInKernel(to, output->device(), from, input.device(),
                                             static_cast<size_t>(bytes));
  }
  output->set_layout(input.layout());
}

BRAID_OPERATOR_SCHEMA(Copy)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .LayoutFollowsInputs()
    .InputsOn(BlobPlace::kAnyDevice)
    .SetDoc("Y = X: copies type, shape, layout and data; X may be on any device, Y is on the op's.");

BRAID_REGISTER_CPU_OPERATOR(Copy, CopyOp);
#ifdef BRAID_WITH_CUDA
BRAID_REGISTER_OPERATOR(Copy, kCuda, "", CopyOp);
#endif
BRAID_REGISTER_GRADIENT(Copy, CopyGradient);

}  // namespace braid
