// MaxPoolGradient and AveragePoolGradient on CUDA devices (ops/nn/pool_gradient_op.h):
// cudnnPoolingBackward from X, Y and dY, modes and refusals as in ops/nn/cudnn_pool.h.
//
// Unlike the CPU op, which recomputes the forward pooling and ignores Y's values, cuDNN's max
// backward finds each window's maximum by comparing X with Y, so Y must be MaxPool's output for
// this X (as the gradient maker wires it). On ties within a window (equal maxima) cuDNN and
// oneDNN may route the gradient to different elements; elsewhere they agree.
#include <memory>
#include <vector>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/nn/cudnn_pool.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class PoolGradientCudaOp : public OperatorBase {
 public:
  PoolGradientCudaOp(const OperatorDef& def, Workspace* ws, bool average)
      : OperatorBase(def, ws), average_(average) {}

  void Run() override {
    bool same = prepared_dims_.size() == 3;
    for (int i = 0; i < 3; ++i) {
      CheckInputType(*this, i, {DType::kFloat32});
      same = same && Input(i).shape() == prepared_dims_[i];
    }
    if (!same) Prepare();
    float* dx = Output(0, DType::kFloat32, problem_.x_dims)->mutable_data<float>();
    if (Output(0)->numel() == 0) return;  // a non-empty X has a non-empty Y (pad < kernel)
    if (descriptors_ == nullptr) descriptors_ = std::make_unique<CudnnPoolDescriptors>(problem_);
    const CudnnPoolDescriptors& d = *descriptors_;
    const float one = 1.f, zero = 0.f;
    CheckCudnn(cudnnPoolingBackward(CudnnHandle(), d.pool.get(), &one, d.y.get(),
                                    Input(1).data<float>(), d.y.get(), Input(2).data<float>(),
                                    d.x.get(), Input(0).data<float>(), &zero, d.x.get(), dx),
               "cudnnPoolingBackward");
  }

 private:
  void Prepare() {
    problem_ = CudnnPoolProblemOf(def(), InputShapeInfos(*this), average_, /*gradient=*/true);
    descriptors_.reset();  // made on the first non-empty run: cuDNN refuses empty tensors
    prepared_dims_.clear();
    for (int i = 0; i < 3; ++i) prepared_dims_.push_back(Input(i).shape());
  }

  const bool average_;
  std::vector<std::vector<int64_t>> prepared_dims_;
  CudnnPoolProblem problem_;
  std::unique_ptr<CudnnPoolDescriptors> descriptors_;
};

class MaxPoolGradientCudaOp final : public PoolGradientCudaOp {
 public:
  MaxPoolGradientCudaOp(const OperatorDef& def, Workspace* ws)
      : PoolGradientCudaOp(def, ws, false) {}
};

class AveragePoolGradientCudaOp final : public PoolGradientCudaOp {
 public:
  AveragePoolGradientCudaOp(const OperatorDef& def, Workspace* ws)
      : PoolGradientCudaOp(def, ws, true) {}
};

}  // namespace

BRAID_REGISTER_OPERATOR(MaxPoolGradient, kCuda, "", MaxPoolGradientCudaOp);
BRAID_REGISTER_OPERATOR(AveragePoolGradient, kCuda, "", AveragePoolGradientCudaOp);

}  // namespace braid
