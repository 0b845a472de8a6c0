// Device code several CUDA ops share (include from .cu files only): elementwise maps, the legacy
// broadcast of Add and Mul, deterministic sums over the outer and inner dims of a [outer, inner_b,
// inner] view, a block reduction, and writing a few host-known integers into device memory
// without a synchronising copy.
//
//   struct SigmoidCuda {
//     __device__ float operator()(float x) const { return 1.f / (1.f + expf(-x)); }
//   };
//   UnaryMapKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(x, y, n,
//                                                                           SigmoidCuda{});
//   SumMiddle(LoadValue{a}, s.outer, s.inner_b, s.inner, c);  // c[j] = sum of a[o, j, p]
//
// Every sum here has a fixed order (a thread's elements, then a fixed tree over the block): the
// same inputs give the same bits on every run. No atomics. Kernels that read and write one index
// per element per thread may run in place.
//
// Thread safety: the host functions queue work on CurrentCudaStream() of the calling thread.
#ifndef BRAID_OPS_COMMON_CUDA_ELEMENTWISE_CUH_
#define BRAID_OPS_COMMON_CUDA_ELEMENTWISE_CUH_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/common/cuda_kernel.h"

namespace braid {

// y[i] = f(x[i]).
template <typename T, typename F>
__global__ void UnaryMapKernel(const T* x, T* y, int64_t n, F f) {
  BRAID_CUDA_KERNEL_LOOP(i, n) y[i] = f(x[i]);
}

// c[i] = f(a[i], b[j]) with a viewed as [outer, inner_b, inner] and j its middle index (b has a's
// shape when inner_b = n and inner = 1).
template <typename T, typename F>
__global__ void BroadcastBinaryKernel(const T* a, const T* b, T* c, int64_t n, int64_t inner_b,
                                      int64_t inner, F f) {
  BRAID_CUDA_KERNEL_LOOP(i, n) c[i] = f(a[i], b[(i / inner) % inner_b]);
}

// Every thread's `value` combined by `op` over the block in a fixed tree, returned to every thread.
// blockDim.x must be a power of two no larger than `shared` (kCudaThreads elements); every thread
// of the block must call it.
template <typename T, typename Op>
__device__ T BlockReduce(T value, T* shared, Op op) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (unsigned int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + stride]);
    }
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();  // everyone has read the result before a next call overwrites `shared`
  return result;
}

struct DeviceSum {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

// Loaders for SumMiddle: the double to add for element i of the [outer, inner_b, inner] view.
struct LoadValue {
  const float* a;
  __device__ double operator()(int64_t i) const { return a[i]; }
};
struct LoadProduct {
  const float* a;
  const float* b;
  __device__ double operator()(int64_t i) const { return static_cast<double>(a[i]) * b[i]; }
};

// out[j] = sum over o, p of load((o * inner_b + j) * inner + p): one block per j.
template <typename Load>
__global__ void SumMiddleBlockKernel(Load load, int64_t outer, int64_t inner_b, int64_t inner,
                                     float* out) {
  __shared__ double partial[kCudaThreads];
  const int64_t count = outer * inner;
  for (int64_t j = blockIdx.x; j < inner_b; j += gridDim.x) {
    double sum = 0;
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const int64_t o = e / inner;
      sum += load((o * inner_b + j) * inner + (e - o * inner));
    }
    sum = BlockReduce(sum, partial, DeviceSum{});
    if (threadIdx.x == 0) out[j] = static_cast<float>(sum);
  }
}

// The same sums, one thread per j (few terms each; neighbouring threads read neighbours when
// inner = 1).
template <typename Load>
__global__ void SumMiddleSerialKernel(Load load, int64_t outer, int64_t inner_b, int64_t inner,
                                      float* out) {
  BRAID_CUDA_KERNEL_LOOP(j, inner_b) {
    double sum = 0;
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t row = (o * inner_b + j) * inner;
      for (int64_t p = 0; p < inner; ++p) sum += load(row + p);
    }
    out[j] = static_cast<float>(sum);
  }
}

// Queues out[j] = sum over o, p of load((o * inner_b + j) * inner + p), accumulated in double,
// for j < inner_b (zeros when outer * inner is 0).
template <typename Load>
void SumMiddle(Load load, int64_t outer, int64_t inner_b, int64_t inner, float* out) {
  if (inner_b == 0) return;
  constexpr int64_t kSerialTermsMax = 256;
  if (outer * inner <= kSerialTermsMax) {
    SumMiddleSerialKernel<<<CudaBlocks(inner_b), kCudaThreads, 0, CurrentCudaStream()>>>(
        load, outer, inner_b, inner, out);
    CheckCudaLaunch("SumMiddleSerialKernel");
    return;
  }
  const auto blocks = static_cast<unsigned int>(std::min<int64_t>(inner_b, 4096));
  SumMiddleBlockKernel<<<blocks, kCudaThreads, 0, CurrentCudaStream()>>>(load, outer, inner_b,
                                                                         inner, out);
  CheckCudaLaunch("SumMiddleBlockKernel");
}

// Up to kSmallValues integers passed by value, so no host buffer has to outlive the launch.
inline constexpr int kSmallValues = 32;
template <typename T>
struct SmallValues {
  T v[kSmallValues];
  int n;
};

template <typename T>
__global__ void WriteSmallValuesKernel(SmallValues<T> values, T* out) {
  if (static_cast<int>(threadIdx.x) < values.n) out[threadIdx.x] = values.v[threadIdx.x];
}

// Queues out[i] = values[i] (a shape, split sizes) on the current stream.
template <typename T>
void WriteValuesAsync(const std::vector<int64_t>& values, T* out) {
  for (size_t begin = 0; begin < values.size(); begin += kSmallValues) {
    SmallValues<T> chunk{};
    chunk.n = static_cast<int>(std::min<size_t>(kSmallValues, values.size() - begin));
    for (int i = 0; i < chunk.n; ++i) chunk.v[i] = static_cast<T>(values[begin + i]);
    WriteSmallValuesKernel<<<1, kSmallValues, 0, CurrentCudaStream()>>>(chunk, out + begin);
    CheckCudaLaunch("WriteSmallValuesKernel");
  }
}

}  // namespace braid

#endif  // BRAID_OPS_COMMON_CUDA_ELEMENTWISE_CUH_
