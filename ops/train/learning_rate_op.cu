// LearningRate on CUDA devices (ops/train/learning_rate_op.h).
//
// The iteration counter lives on the GPU and the host may not read it, so one thread evaluates
// LearningRateAt (ops/train/learning_rate_schedule.h), the very function the CPU kernel calls,
// on the device and writes the rate where MomentumSGDUpdate and WeightedSum read it.
#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/train/learning_rate_op.h"
#include "ops/train/learning_rate_schedule.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

__global__ void LearningRateKernel(LearningRateSchedule schedule, const int64_t* iter, float* lr) {
  *lr = LearningRateAt(schedule, *iter);
}

class LearningRateCudaOp final : public LearningRateOp {
 public:
  using LearningRateOp::LearningRateOp;
  void Run() override {
    CheckInputType(*this, 0, {DType::kInt64});
    InferLearningRateShape(def(), InputShapeInfos(*this));
    float* lr = Output(0, DType::kFloat32, {})->mutable_data<float>();
    LearningRateKernel<<<1, 1, 0, CurrentCudaStream()>>>(schedule_, Input(0).data<int64_t>(), lr);
    CheckCudaLaunch("LearningRateKernel");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(LearningRate, kCuda, "", LearningRateCudaOp);

}  // namespace braid
