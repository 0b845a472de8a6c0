// SpatialBN on CUDA devices (ops/nn/spatial_bn_op.h), with braid's own kernels rather than
// cuDNN's batch norm: cuDNN needs epsilon >= CUDNN_BN_MIN_EPSILON where the CPU op takes any, and
// documents neither the order of its reductions nor their determinism. Outputs mean what the CPU
// op's do:
//   training: saved_mean = batch mean, saved_inv_var = 1 / sqrt(biased batch var + epsilon),
//             running = momentum * running + (1 - momentum) * batch (the variance unbiased by
//             m / (m - 1), m = N * spatial), Y normalised with the batch statistics;
//   is_test:  Y = scale * (X - running_mean) / sqrt(running_var + epsilon) + bias.
// Statistics: blocks of each channel sum it in double (two passes: the mean, then the squared
// deviations from it) in a fixed order (ops/nn/cuda_channel_reduce.cuh), so every run computes
// the same bits.
#include <vector>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/nn/cuda_channel_reduce.cuh"
#include "ops/nn/spatial_bn_cuda.cuh"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

struct BnStatisticsArgs {
  const float* x = nullptr;
  int64_t n = 0, channels = 0, spatial = 1;
  float epsilon = 0.f, momentum = 0.f;
  const float* running_mean_in = nullptr;  // inputs 3 and 4 (the same blobs as outputs 1 and 2)
  const float* running_var_in = nullptr;
  float* running_mean = nullptr;
  float* running_var = nullptr;
  float* saved_mean = nullptr;
  float* saved_inv_std = nullptr;
};

// (x - mean)^2 of one element, in double.
struct SquaredDeviationTerm {
  const float* x;
  double mean;
  BRAID_HOST_DEVICE double operator()(int64_t at) const {
    const double d = x[at] - mean;
    return d * d;
  }
};

// SquaredDeviationTerm of channel ch, around its mean as BnMeanKernel left it.
struct SquaredDeviationTerms {
  const float* x;
  const double* mean;
  __device__ SquaredDeviationTerm operator()(int64_t ch) const { return {x, mean[ch]}; }
};

// Each channel's batch mean, from its block sums.
__global__ void BnMeanKernel(const double* partials, int blocks, int64_t c, double m,
                             double* mean) {
  BRAID_CUDA_KERNEL_LOOP(ch, c) mean[ch] = ChannelTotal(partials, ch, blocks) / m;
}

// Each channel's biased variance from its block sums of squared deviations, then the four [C]
// outputs from the float mean and variance, by the CPU op's float formulas.
__global__ void BnStatisticsKernel(BnStatisticsArgs a, const double* partials, int blocks,
                                   const double* mean) {
  const double m = static_cast<double>(a.n * a.spatial);
  BRAID_CUDA_KERNEL_LOOP(ch, a.channels) {
    const float mean_f = static_cast<float>(mean[ch]);
    const float var_f = static_cast<float>(ChannelTotal(partials, ch, blocks) / m);
    const float unbias = static_cast<float>(m / (m - 1));
    a.saved_mean[ch] = mean_f;
    a.saved_inv_std[ch] = 1.f / sqrtf(var_f + a.epsilon);
    a.running_mean[ch] = a.momentum * a.running_mean_in[ch] + (1.f - a.momentum) * mean_f;
    a.running_var[ch] = a.momentum * a.running_var_in[ch] + (1.f - a.momentum) * unbias * var_f;
  }
}

class SpatialBNCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    bool same = prepared_dims_.size() == 5;
    for (int i = 0; i < 5; ++i) {
      CheckInputType(*this, i, {DType::kFloat32});
      same = same && Input(i).shape() == prepared_dims_[i];
    }
    if (!same) Prepare();
    const Tensor& x = Input(0);
    const int64_t c = x.dim(1);
    BnAffineArgs affine;
    affine.x = x.data<float>();  // before Y's write: Y may be X
    affine.scale = Input(1).data<float>();
    affine.bias = Input(2).data<float>();
    affine.channels = c;
    affine.spatial = SizeFromDim(x.shape(), 2);
    affine.total = x.numel();
    if (is_test_) {
      affine.mean = Input(3).data<float>();
      affine.variance = Input(4).data<float>();
      affine.epsilon = epsilon_;
      affine.y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
      LaunchBnAffine(affine, /*relu=*/false);
      return;
    }
    RunTraining(&affine);
  }

 private:
  void Prepare() {
    FindSchema(type())->InferShapes(def(), InputShapeInfos(*this));  // the CPU op's checks
    is_test_ = args().Get<bool>("is_test", false);
    epsilon_ = args().Get<float>("epsilon", 1e-5f);
    momentum_ = args().Get<float>("momentum", 0.9f);
    prepared_dims_.clear();
    for (int i = 0; i < 5; ++i) prepared_dims_.push_back(Input(i).shape());
  }

  void RunTraining(BnAffineArgs* affine) {
    const int64_t c = affine->channels;
    BnStatisticsArgs stats;
    stats.x = affine->x;
    stats.n = Input(0).dim(0);
    stats.channels = c;
    stats.spatial = affine->spatial;
    stats.epsilon = epsilon_;
    stats.momentum = momentum_;
    stats.running_mean_in = Input(3).data<float>();
    stats.running_var_in = Input(4).data<float>();
    stats.running_mean = Output(1, DType::kFloat32, {c})->mutable_data<float>();
    stats.running_var = Output(2, DType::kFloat32, {c})->mutable_data<float>();
    stats.saved_mean = Output(3, DType::kFloat32, {c})->mutable_data<float>();
    stats.saved_inv_std = Output(4, DType::kFloat32, {c})->mutable_data<float>();
    affine->y = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
    if (affine->total == 0) return;  // no channel (N * spatial > 1 is checked)
    const int blocks = ChannelReduceBlocks(stats.n * stats.spatial);
    // The block sums, then each channel's mean.
    DeviceScratch scratch(static_cast<size_t>(c * (blocks + 1)) * sizeof(double));
    double* sums = static_cast<double*>(scratch.get());
    double* mean = sums + c * blocks;
    cudaStream_t stream = CurrentCudaStream();
    LaunchChannelBlockSums(ValueTerms{stats.x}, stats.n, c, stats.spatial, sums, "BnMeanSums");
    BnMeanKernel<<<CudaBlocks(c), kCudaThreads, 0, stream>>>(
        sums, blocks, c, static_cast<double>(stats.n * stats.spatial), mean);
    CheckCudaLaunch("BnMeanKernel");
    LaunchChannelBlockSums(SquaredDeviationTerms{stats.x, mean}, stats.n, c, stats.spatial, sums,
                           "BnVarianceSums");
    BnStatisticsKernel<<<CudaBlocks(c), kCudaThreads, 0, stream>>>(stats, sums, blocks, mean);
    CheckCudaLaunch("BnStatisticsKernel");
    affine->mean = stats.saved_mean;
    affine->inv_std = stats.saved_inv_std;
    LaunchBnAffine(*affine, /*relu=*/false);
  }

  std::vector<std::vector<int64_t>> prepared_dims_;
  bool is_test_ = false;
  float epsilon_ = 1e-5f, momentum_ = 0.9f;
};

}  // namespace

BRAID_REGISTER_OPERATOR(SpatialBN, kCuda, "", SpatialBNCudaOp);

}  // namespace braid
