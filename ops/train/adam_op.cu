// Adam on CUDA devices (ops/train/adam_op.h). The learning rate and the iteration counter are read
// by the kernel from device memory (LearningRate's and Iter's outputs), never by the host; each
// thread evaluates the bias correction with AdamCorrection, and every element AdamUpdate, the
// functions the CPU kernel calls (ops/train/adaptive_update.h). Each thread reads an element's
// inputs before it writes its outputs, so in-place outputs are safe. nvcc may fuse a multiply and
// an add into one FMA where the CPU rounds twice: results agree with the CPU's to about an ulp.
#include "ops/common/cuda_kernel.h"
#include "ops/train/adam_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

constexpr int kParam = 0, kMoment1 = 1, kMoment2 = 2, kGrad = 3, kLr = 4, kIter = 5;

__global__ void AdamKernel(AdamArgs a, const float* param, const float* m1, const float* m2,
                           const float* grad, const float* lr, const int64_t* iter, int64_t n,
                           float* new_param, float* new_m1, float* new_m2, float* step) {
  const float rate = *lr;
  const float correction = AdamCorrection(a, *iter);
  BRAID_CUDA_KERNEL_LOOP(i, n) {
    const AdamElement e = AdamUpdate(a, rate, correction, param[i], grad[i], m1[i], m2[i]);
    new_param[i] = e.param;
    new_m1[i] = e.moment1;
    new_m2[i] = e.moment2;
    if (step != nullptr) step[i] = e.direction;
  }
}

class AdamCudaOp final : public AdamOp {
 public:
  using AdamOp::AdamOp;
  void Run() override {
    const std::vector<int64_t> shape = CheckInputs();
    const int64_t n = Input(kParam).numel();
    const Outputs out = ShapedOutputs(shape);
    AdamKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
        args_, Input(kParam).data<float>(), Input(kMoment1).data<float>(),
        Input(kMoment2).data<float>(), Input(kGrad).data<float>(), Input(kLr).data<float>(),
        Input(kIter).data<int64_t>(), n, out.param, out.m1, out.m2, out.step);
    CheckCudaLaunch("AdamKernel");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Adam, kCuda, "", AdamCudaOp);

}  // namespace braid
