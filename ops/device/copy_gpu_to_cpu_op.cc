// CopyGPUToCPU (Caffe2's name): runs on a device (sim or cuda, its device_option) and copies a
// blob on that device into a host blob. The kernel is Copy's (ops/math/copy_op.h). Its gradient
// copies dY back to the device with CopyCPUToGPU on the same device.
#include "ops/math/copy_op.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

GradientOps CopyGPUToCPUGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return {{MakeGradientOp(r.op, "CopyCPUToGPU", {r.output_grads[0]}, {r.input_grads[0]})},
          {true}};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(CopyGPUToCPU)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .LayoutFollowsInputs()
    .OutputsOn(BlobPlace::kHost)
    .SetDoc("Y (on the host) = X (on the op's device).");

BRAID_REGISTER_OPERATOR(CopyGPUToCPU, kSim, "", CopyOp);
#ifdef BRAID_WITH_CUDA  // cudaMemcpyAsync on the current stream
BRAID_REGISTER_OPERATOR(CopyGPUToCPU, kCuda, "", CopyOp);
#endif
BRAID_REGISTER_GRADIENT(CopyGPUToCPU, CopyGPUToCPUGradient);

}  // namespace braid
