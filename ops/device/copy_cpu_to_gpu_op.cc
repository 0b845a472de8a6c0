// CopyCPUToGPU (Caffe2's name): runs on a device (sim or cuda, its device_option) and copies a
// host blob into a blob on that device. The kernel is Copy's (ops/math/copy_op.h). Its gradient
// copies dY back to the host with CopyGPUToCPU on the same device.
#include "ops/math/copy_op.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

GradientOps CopyCPUToGPUGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return {{MakeGradientOp(r.op, "CopyGPUToCPU", {r.output_grads[0]}, {r.input_grads[0]})},
          {true}};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(CopyCPUToGPU)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .LayoutFollowsInputs()
    .InputsOn(BlobPlace::kHost)
    .SetDoc("Y (on the op's device) = X (on the host).");

BRAID_REGISTER_OPERATOR(CopyCPUToGPU, kSim, "", CopyOp);
#ifdef BRAID_WITH_CUDA  // cudaMemcpyAsync on the current stream
BRAID_REGISTER_OPERATOR(CopyCPUToGPU, kCuda, "", CopyOp);
#endif
BRAID_REGISTER_GRADIENT(CopyCPUToGPU, CopyCPUToGPUGradient);

}  // namespace braid
