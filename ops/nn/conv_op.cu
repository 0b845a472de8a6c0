// Conv on CUDA devices (ops/nn/conv_op.h): cuDNN's forward convolution with the algorithm the
// AlgorithmRegistry chose for every replica (ops/nn/cudnn_conv.h), then the bias.
#include <memory>
#include <optional>
#include <vector>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/nn/cudnn_conv.h"
#include "runtime/core/fused_activation.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class ConvCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    bool same = static_cast<int>(prepared_dims_.size()) == InputSize();
    for (int i = 0; i < InputSize(); ++i) {
      CheckInputType(*this, i, {DType::kFloat32});
      same = same && Input(i).shape() == prepared_dims_[i];
    }
    if (!same) Prepare();
    float* y = Output(0, DType::kFloat32, problem_.y_dims)->mutable_data<float>();
    if (Output(0)->numel() == 0) return;
    if (descriptors_ == nullptr) descriptors_ = std::make_unique<CudnnConvDescriptors>(problem_);
    const CudnnConvDescriptors& d = *descriptors_;
    const float* x = Input(0).data<float>();
    const float* w = Input(1).data<float>();
    if (!algorithm_) {  // a search overwrites Y, which the convolution then writes
      algorithm_ = ChooseCudnnConvAlgorithm(problem_, d, CudnnConvDirection::kForward,
                                            {x, w, nullptr, y}, device(), search_);
    }
    DeviceScratch workspace(algorithm_->workspace_bytes);
    cudnnHandle_t handle = CudnnHandle();
    const float one = 1.f, zero = 0.f;
    CheckCudnn(cudnnConvolutionForward(handle, &one, d.x.get(), x, d.filter.get(), w, d.conv.get(),
                                       static_cast<cudnnConvolutionFwdAlgo_t>(algorithm_->algo),
                                       workspace.get(), workspace.bytes(), &zero, d.y.get(), y),
               "cudnnConvolutionForward");
    if (problem_.has_bias) {
      CheckCudnn(
          cudnnAddTensor(handle, &one, d.bias.get(), Input(2).data<float>(), &one, d.y.get(), y),
          "cudnnAddTensor");
    }
  }

 private:
  void Prepare() {
    if (HasFusedEpilogue(def())) {
      ThrowInvalidArgument("fused_sum and fused_activation are inference fusions of CPU and sim "
                           "devices; on CUDA run the Sum and activation ops after the Conv");
    }
    problem_ = CudnnConvProblemOf(def(), InputShapeInfos(*this));
    descriptors_.reset();  // made on the first non-empty run: cuDNN refuses empty tensors
    algorithm_.reset();
    prepared_dims_.clear();
    for (int i = 0; i < InputSize(); ++i) prepared_dims_.push_back(Input(i).shape());
  }

  const ConvSearchOptions search_ = ConvSearchOptionsOf(def());  // Caffe2's cuDNN hints
  std::vector<std::vector<int64_t>> prepared_dims_;
  CudnnConvProblem problem_;
  std::unique_ptr<CudnnConvDescriptors> descriptors_;
  std::optional<CudnnConvAlgorithm> algorithm_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(Conv, kCuda, "", ConvCudaOp);

}  // namespace braid
