// ConvGradient on CUDA devices (ops/nn/conv_gradient_op.h): cuDNN's backward-filter and
// backward-data convolutions with the algorithms the AlgorithmRegistry chose for every replica
// (ops/nn/cudnn_conv.h), and dbias as a per-channel sum of dY in double by deterministic kernels
// (ops/nn/cuda_channel_reduce.cuh; no atomics, unlike what cuDNN may use for
// cudnnConvolutionBackwardBias).
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/nn/cuda_channel_reduce.cuh"
#include "ops/nn/cudnn_conv.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

// db[m] = sum of dy[n, m, :, :] over n, from the channels' block sums (in double).
__global__ void BiasGradientKernel(const double* partials, int blocks, int64_t m, float* db) {
  BRAID_CUDA_KERNEL_LOOP(ch, m) db[ch] = static_cast<float>(ChannelTotal(partials, ch, blocks));
}

class ConvGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    bool same = prepared_dims_.size() == 3;
    for (int i = 0; i < 3; ++i) {
      CheckInputType(*this, i, {DType::kFloat32});
      same = same && Input(i).shape() == prepared_dims_[i];
    }
    if (!same) Prepare();
    const CudnnConvProblem& p = problem_;
    float* dw = Output(outputs_.dfilter, DType::kFloat32, p.filter_dims)->mutable_data<float>();
    float* db = nullptr;
    if (outputs_.dbias >= 0) {
      db = Output(outputs_.dbias, DType::kFloat32, {p.out_channels()})->mutable_data<float>();
    }
    float* dx = nullptr;
    if (outputs_.dx >= 0)
      dx = Output(outputs_.dx, DType::kFloat32, p.x_dims)->mutable_data<float>();
    if (Input(2).numel() == 0) {  // an empty batch or no output channel: all gradients are zero
      ZeroFill(dw, Output(outputs_.dfilter)->numel());
      if (db != nullptr) ZeroFill(db, p.out_channels());
      // With no output channel (filter [0, C, kH, kW]) X is not empty, yet nothing depends on it.
      if (dx != nullptr) ZeroFill(dx, Output(outputs_.dx)->numel());
      return;
    }
    if (descriptors_ == nullptr) descriptors_ = std::make_unique<CudnnConvDescriptors>(p);
    const float* x = Input(0).data<float>();
    const float* w = Input(1).data<float>();
    const float* dy = Input(2).data<float>();
    ChooseAlgorithms(x, w, dy, dw, dx);
    DeviceScratch workspace(std::max(filter_algorithm_->workspace_bytes,
                                     dx != nullptr ? data_algorithm_->workspace_bytes : 0));
    RunBackward(x, w, dy, workspace, dw, dx);
    if (db != nullptr) {
      const int64_t n = p.y_dims[0], m = p.out_channels(), s = p.y_dims[2] * p.y_dims[3];
      const int blocks = ChannelReduceBlocks(n * s);
      DeviceScratch partials(static_cast<size_t>(m * blocks) * sizeof(double));
      double* sums = static_cast<double*>(partials.get());
      LaunchChannelBlockSums(ValueTerms{dy}, n, m, s, sums, "BiasGradientSums");
      BiasGradientKernel<<<CudaBlocks(m), kCudaThreads, 0, CurrentCudaStream()>>>(sums, blocks, m,
                                                                                  db);
      CheckCudaLaunch("BiasGradientKernel");
    }
  }

 private:
  void Prepare() {
    problem_ = CudnnConvGradientProblemOf(def(), InputShapeInfos(*this), &outputs_);
    descriptors_.reset();  // made on the first non-empty run: cuDNN refuses empty tensors
    filter_algorithm_.reset();
    data_algorithm_.reset();
    prepared_dims_.clear();
    for (int i = 0; i < 3; ++i) prepared_dims_.push_back(Input(i).shape());
  }

  // Searches write into the outputs, which the backward convolutions then overwrite.
  void ChooseAlgorithms(const float* x, const float* w, const float* dy, float* dw, float* dx) {
    if (!filter_algorithm_) {
      filter_algorithm_ =
          ChooseCudnnConvAlgorithm(problem_, *descriptors_, CudnnConvDirection::kBackwardFilter,
                                   {x, nullptr, dy, dw}, device(), search_);
    }
    if (dx != nullptr && !data_algorithm_) {
      data_algorithm_ =
          ChooseCudnnConvAlgorithm(problem_, *descriptors_, CudnnConvDirection::kBackwardData,
                                   {nullptr, w, dy, dx}, device(), search_);
    }
  }

  void RunBackward(const float* x, const float* w, const float* dy, const DeviceScratch& workspace,
                   float* dw, float* dx) {
    const CudnnConvDescriptors& d = *descriptors_;
    cudnnHandle_t handle = CudnnHandle();
    const float one = 1.f, zero = 0.f;
    CheckCudnn(cudnnConvolutionBackwardFilter(
                   handle, &one, d.x.get(), x, d.y.get(), dy, d.conv.get(),
                   static_cast<cudnnConvolutionBwdFilterAlgo_t>(filter_algorithm_->algo),
                   workspace.get(), workspace.bytes(), &zero, d.filter.get(), dw),
               "cudnnConvolutionBackwardFilter");
    if (dx == nullptr) return;
    CheckCudnn(cudnnConvolutionBackwardData(
                   handle, &one, d.filter.get(), w, d.y.get(), dy, d.conv.get(),
                   static_cast<cudnnConvolutionBwdDataAlgo_t>(data_algorithm_->algo),
                   workspace.get(), workspace.bytes(), &zero, d.x.get(), dx),
               "cudnnConvolutionBackwardData");
  }

  void ZeroFill(float* data, int64_t n) {
    CheckCuda(cudaMemsetAsync(data, 0, static_cast<size_t>(n) * sizeof(float), CurrentCudaStream()),
              "cudaMemsetAsync", device());
  }

  const ConvSearchOptions search_ = ConvSearchOptionsOf(def());  // Caffe2's cuDNN hints
  std::vector<std::vector<int64_t>> prepared_dims_;
  CudnnConvProblem problem_;
  CudnnConvGradientOutputs outputs_;
  std::unique_ptr<CudnnConvDescriptors> descriptors_;
  std::optional<CudnnConvAlgorithm> filter_algorithm_, data_algorithm_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(ConvGradient, kCuda, "", ConvGradientCudaOp);

}  // namespace braid
