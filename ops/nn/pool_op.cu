// MaxPool and AveragePool on CUDA devices (ops/nn/pool_op.h): cudnnPoolingForward, modes and
// refusals as in ops/nn/cudnn_pool.h.
#include <memory>
#include <vector>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/nn/cudnn_pool.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class PoolCudaOp : public OperatorBase {
 public:
  PoolCudaOp(const OperatorDef& def, Workspace* ws, bool average)
      : OperatorBase(def, ws), average_(average) {}

  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    if (Input(0).shape() != prepared_dims_) {
      problem_ = CudnnPoolProblemOf(def(), InputShapeInfos(*this), average_, /*gradient=*/false);
      descriptors_.reset();  // made on the first non-empty run: cuDNN refuses empty tensors
      prepared_dims_ = Input(0).shape();
    }
    float* y = Output(0, DType::kFloat32, problem_.y_dims)->mutable_data<float>();
    if (Output(0)->numel() == 0) return;
    if (descriptors_ == nullptr) descriptors_ = std::make_unique<CudnnPoolDescriptors>(problem_);
    const CudnnPoolDescriptors& d = *descriptors_;
    const float one = 1.f, zero = 0.f;
    CheckCudnn(cudnnPoolingForward(CudnnHandle(), d.pool.get(), &one, d.x.get(),
                                   Input(0).data<float>(), &zero, d.y.get(), y),
               "cudnnPoolingForward");
  }

 private:
  const bool average_;
  std::vector<int64_t> prepared_dims_;
  CudnnPoolProblem problem_;
  std::unique_ptr<CudnnPoolDescriptors> descriptors_;
};

class MaxPoolCudaOp final : public PoolCudaOp {
 public:
  MaxPoolCudaOp(const OperatorDef& def, Workspace* ws) : PoolCudaOp(def, ws, false) {}
};

class AveragePoolCudaOp final : public PoolCudaOp {
 public:
  AveragePoolCudaOp(const OperatorDef& def, Workspace* ws) : PoolCudaOp(def, ws, true) {}
};

}  // namespace

BRAID_REGISTER_OPERATOR(MaxPool, kCuda, "", MaxPoolCudaOp);
BRAID_REGISTER_OPERATOR(AveragePool, kCuda, "", AveragePoolCudaOp);

}  // namespace braid
