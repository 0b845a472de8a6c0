// MomentumSGDUpdate on CUDA devices (ops/train/momentum_sgd_update_op.h). The learning rate is
// read by the kernel from device memory (LearningRate's output), never by the host. Each thread
// reads an element's grad, moment and param before it writes them, so in-place outputs are safe.
// nvcc may fuse a multiply and an add into one FMA where the CPU rounds twice: results agree with
// the CPU's to about an ulp, and are identical from run to run.
#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/train/momentum_sgd_update_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

constexpr int kGrad = 0, kMoment = 1, kLr = 2, kParam = 3;

struct MomentumArgs {
  float momentum;
  float weight_decay;
  bool nesterov;
};

__global__ void MomentumSGDUpdateKernel(const float* grad, const float* moment, const float* lr,
                                        const float* param, MomentumArgs a, int64_t n,
                                        float* new_grad, float* new_moment, float* new_param) {
  const float rate = *lr;
  BRAID_CUDA_KERNEL_LOOP(i, n) {
    const float p = param[i];
    const float g = grad[i] + a.weight_decay * p;
    const float m = moment[i];
    const float m_new = rate * g + a.momentum * m;
    const float step = a.nesterov ? (1 + a.momentum) * m_new - a.momentum * m : m_new;
    new_moment[i] = m_new;
    new_grad[i] = step;
    new_param[i] = p - step;
  }
}

class MomentumSGDUpdateCudaOp final : public MomentumSGDUpdateOp {
 public:
  using MomentumSGDUpdateOp::MomentumSGDUpdateOp;
  void Run() override {
    for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
    InferMomentumSGDUpdateShape(def(), InputShapeInfos(*this));
    const std::vector<int64_t>& shape = Input(kGrad).shape();
    const int64_t n = Input(kGrad).numel();
    float* new_grad = Output(0, DType::kFloat32, shape)->mutable_data<float>();
    float* new_moment = Output(1, DType::kFloat32, shape)->mutable_data<float>();
    float* new_param = Output(2, DType::kFloat32, shape)->mutable_data<float>();
    MomentumSGDUpdateKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
        Input(kGrad).data<float>(), Input(kMoment).data<float>(), Input(kLr).data<float>(),
        Input(kParam).data<float>(), MomentumArgs{momentum_, weight_decay_, nesterov_}, n,
        new_grad, new_moment, new_param);
    CheckCudaLaunch("MomentumSGDUpdateKernel");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(MomentumSGDUpdate, kCuda, "", MomentumSGDUpdateCudaOp);

}  // namespace braid
