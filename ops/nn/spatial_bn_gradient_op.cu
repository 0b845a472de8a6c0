// SpatialBNGradient on CUDA devices (ops/nn/spatial_bn_gradient_op.h), with braid's own kernels
// (see ops/nn/spatial_bn_op.cu for why not cuDNN's). With xhat = (x - saved_mean) * saved_inv_var
// and m = N * spatial, per channel:
//   dbias = sum(dy),  dscale = sum(dy * xhat),
//   dx = scale * saved_inv_var * (dy - dbias / m - xhat * dscale / m),
// the gradient of training-mode batch norm, as oneDNN's backward (the CPU op) computes it. The
// sums take blocks of each channel, in double, in a fixed order (ops/nn/cuda_channel_reduce.cuh;
// no atomics), so every run computes the same bits.
#include <vector>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/nn/cuda_channel_reduce.cuh"
#include "ops/nn/spatial_bn_cuda.cuh"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

struct BnGradientArgs {
  const float* x = nullptr;
  const float* scale = nullptr;
  const float* dy = nullptr;
  const float* mean = nullptr;
  const float* inv_std = nullptr;
  int64_t n = 0, channels = 0, spatial = 1;
  float* dx = nullptr;
  float* dscale = nullptr;
  float* dbias = nullptr;
};

// dy and dy * xhat of one element, in double.
struct BnGradientTerms {
  double dy = 0, dy_xhat = 0;
};
BRAID_HOST_DEVICE inline BnGradientTerms operator+(const BnGradientTerms& a,
                                                   const BnGradientTerms& b) {
  return {a.dy + b.dy, a.dy_xhat + b.dy_xhat};
}
struct BnGradientTerm {
  const float* x;
  const float* dy;
  double mean, inv_std;
  BRAID_HOST_DEVICE BnGradientTerms operator()(int64_t at) const {
    const double g = dy[at];
    return {g, g * ((x[at] - mean) * inv_std)};
  }
};

// BnGradientTerm of channel ch.
struct BnGradientTermsOf {
  const float* x;
  const float* dy;
  const float* mean;
  const float* inv_std;
  __device__ BnGradientTerm operator()(int64_t ch) const { return {x, dy, mean[ch], inv_std[ch]}; }
};

// dbias and dscale of each channel, from its block sums (in double).
__global__ void BnGradientSumsKernel(BnGradientArgs a, const BnGradientTerms* partials,
                                     int blocks) {
  BRAID_CUDA_KERNEL_LOOP(ch, a.channels) {
    const BnGradientTerms total = ChannelTotal(partials, ch, blocks);
    a.dbias[ch] = static_cast<float>(total.dy);
    a.dscale[ch] = static_cast<float>(total.dy_xhat);
  }
}

__global__ void BnGradientInputKernel(BnGradientArgs a) {
  const int64_t total = a.n * a.channels * a.spatial;
  const float m = static_cast<float>(a.n * a.spatial);
  BRAID_CUDA_KERNEL_LOOP(i, total) {
    const int64_t ch = BnChannelOf(i, a.spatial, a.channels, total);
    const float inv_std = a.inv_std[ch];
    const float xhat = (a.x[i] - a.mean[ch]) * inv_std;
    a.dx[i] = a.scale[ch] * inv_std * (a.dy[i] - a.dbias[ch] / m - xhat * a.dscale[ch] / m);
  }
}

class SpatialBNGradientCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    bool same = prepared_dims_.size() == 5;
    for (int i = 0; i < 5; ++i) {
      CheckInputType(*this, i, {DType::kFloat32});
      same = same && Input(i).shape() == prepared_dims_[i];
    }
    if (!same) {
      FindSchema(type())->InferShapes(def(), InputShapeInfos(*this));  // the CPU op's checks
      prepared_dims_.clear();
      for (int i = 0; i < 5; ++i) prepared_dims_.push_back(Input(i).shape());
    }
    const Tensor& x = Input(0);
    const int64_t c = x.dim(1);
    BnGradientArgs a;
    a.x = x.data<float>();
    a.scale = Input(1).data<float>();
    a.dy = Input(2).data<float>();
    a.mean = Input(3).data<float>();
    a.inv_std = Input(4).data<float>();
    a.n = x.dim(0);
    a.channels = c;
    a.spatial = SizeFromDim(x.shape(), 2);
    a.dx = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    a.dscale = Output(1, DType::kFloat32, {c})->mutable_data<float>();
    a.dbias = Output(2, DType::kFloat32, {c})->mutable_data<float>();
    cudaStream_t stream = CurrentCudaStream();
    if (c == 0) return;
    // An empty batch (N * spatial == 0) makes the sums zero, as on the CPU, and dx empty.
    const int blocks = ChannelReduceBlocks(a.n * a.spatial);
    DeviceScratch partials(static_cast<size_t>(c * blocks) * sizeof(BnGradientTerms));
    auto* sums = static_cast<BnGradientTerms*>(partials.get());
    LaunchChannelBlockSums(BnGradientTermsOf{a.x, a.dy, a.mean, a.inv_std}, a.n, c, a.spatial, sums,
                           "BnGradientSums");
    BnGradientSumsKernel<<<CudaBlocks(c), kCudaThreads, 0, stream>>>(a, sums, blocks);
    CheckCudaLaunch("BnGradientSumsKernel");
    const int64_t total = x.numel();
    if (total == 0) return;
    BnGradientInputKernel<<<CudaBlocks(total), kCudaThreads, 0, stream>>>(a);
    CheckCudaLaunch("BnGradientInputKernel");
  }

 private:
  std::vector<std::vector<int64_t>> prepared_dims_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(SpatialBNGradient, kCuda, "", SpatialBNGradientCudaOp);

}  // namespace braid
