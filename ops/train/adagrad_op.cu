// Adagrad on CUDA devices (ops/train/adagrad_op.h). The learning rate is read by the kernel from
// device memory (LearningRate's output), never by the host; every element is AdagradUpdate, the
// function the CPU kernel calls (ops/train/adaptive_update.h). Each thread reads an element's
// inputs before it writes its outputs, so in-place outputs are safe. nvcc may fuse a multiply and
// an add into one FMA where the CPU rounds twice: results agree with the CPU's to about an ulp.
#include "ops/common/cuda_kernel.h"
#include "ops/train/adagrad_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

constexpr int kParam = 0, kMoment = 1, kGrad = 2, kLr = 3;

__global__ void AdagradKernel(AdagradArgs a, const float* param, const float* moment,
                              const float* grad, const float* lr, int64_t n, float* new_param,
                              float* new_moment, float* effective_lr, float* update) {
  const float rate = *lr;
  BRAID_CUDA_KERNEL_LOOP(i, n) {
    const AdagradElement e = AdagradUpdate(a, rate, param[i], grad[i], moment[i]);
    new_param[i] = e.param;
    new_moment[i] = e.moment;
    if (effective_lr != nullptr) effective_lr[i] = e.effective_lr;
    if (update != nullptr) update[i] = e.step;
  }
}

class AdagradCudaOp final : public AdagradOp {
 public:
  using AdagradOp::AdagradOp;
  void Run() override {
    const std::vector<int64_t> shape = CheckInputs();
    const int64_t n = Input(kParam).numel();
    const Outputs out = ShapedOutputs(shape);
    AdagradKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
        args_, Input(kParam).data<float>(), Input(kMoment).data<float>(),
        Input(kGrad).data<float>(), Input(kLr).data<float>(), n, out.param, out.moment,
        out.effective_lr, out.update);
    CheckCudaLaunch("AdagradKernel");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Adagrad, kCuda, "", AdagradCudaOp);

}  // namespace braid
