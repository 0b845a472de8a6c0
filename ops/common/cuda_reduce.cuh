// Deterministic reductions for braid's CUDA kernels (ops/**/*_op.cu): a block-level tree reduction
// in shared memory, and a two-kernel sum over a whole index range, both in a fixed order, so that
// repeated runs give identical bits (no atomics, no floating-point order that depends on timing).
//
//   struct SquareTerm {                       // what to add up for index i
//     const float* x;
//     __device__ double operator()(int64_t i) const { return double(x[i]) * x[i]; }
//   };
//   struct StoreAsFloat {                     // run by one thread with the total
//     float* out;
//     __device__ void operator()(double sum) const { *out = static_cast<float>(sum); }
//   };
//   QueueDeterministicSum<double>(n, SquareTerm{x}, StoreAsFloat{y}, "SquareSum");
//
// The order of the additions depends only on n (the launch shape is a function of n), never on
// scheduling. The value type T needs T{} as zero and a __device__ operator+ (double, or a small
// struct of doubles summing several quantities in one pass).
//
// Contract: block functions must be called by every thread of a block of exactly kCudaThreads
// threads (a power of two); each call ends with __syncthreads(), so calls may follow one another.
// QueueDeterministicSum only queues work on CurrentCudaStream(), like any CUDA op's Run.
#ifndef BRAID_OPS_COMMON_CUDA_REDUCE_CUH_
#define BRAID_OPS_COMMON_CUDA_REDUCE_CUH_

#include <cstdint>

#include "ops/common/cuda_kernel.h"

namespace braid {

// Partial sums of QueueDeterministicSum's first kernel: at most this many blocks, so that its
// second kernel (one block) adds at most 4 partials per thread.
inline constexpr unsigned int kMaxPartialSums = 1024;

// Combines every thread's `value` with `op` in a fixed tree order; every thread gets the result.
template <typename T, typename Op>
__device__ T BlockReduce(T value, Op op) {
  __shared__ T shared[kCudaThreads];
  const unsigned int tid = threadIdx.x;
  shared[tid] = value;
  __syncthreads();
  for (unsigned int stride = kCudaThreads / 2; stride > 0; stride /= 2) {
    if (tid < stride) shared[tid] = op(shared[tid], shared[tid + stride]);
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();  // a following call may overwrite shared[0] only once everyone has read it
  return result;
}

struct AddOp {
  template <typename T>
  __device__ T operator()(const T& a, const T& b) const { return a + b; }
};

struct MaxOp {
  __device__ float operator()(float a, float b) const { return a < b ? b : a; }
};

template <typename T>
__device__ T BlockSum(T value) { return BlockReduce(value, AddOp{}); }

__device__ inline float BlockMax(float value) { return BlockReduce(value, MaxOp{}); }

template <typename T, typename Term>
__global__ void PartialSumsKernel(Term term, int64_t n, T* partials) {
  T sum{};
  BRAID_CUDA_KERNEL_LOOP(i, n) sum = sum + term(i);
  sum = BlockSum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

template <typename T, typename Finish>
__global__ void FinishSumKernel(const T* partials, unsigned int count, Finish finish) {
  T sum{};
  for (unsigned int i = threadIdx.x; i < count; i += kCudaThreads) sum = sum + partials[i];
  sum = BlockSum(sum);
  if (threadIdx.x == 0) finish(sum);
}

// Queues sum = term(0) + ... + term(n - 1) (T{} for n = 0) and then finish(sum) on one thread.
// `what` names the reduction in launch errors.
template <typename T, typename Term, typename Finish>
void QueueDeterministicSum(int64_t n, Term term, Finish finish, const char* what) {
  const unsigned int blocks = CudaBlocks(n) < kMaxPartialSums ? CudaBlocks(n) : kMaxPartialSums;
  DeviceScratch partials(blocks * sizeof(T));  // kept by the queued kernels (stream-ordered)
  T* sums = static_cast<T*>(partials.get());
  PartialSumsKernel<T><<<blocks, kCudaThreads, 0, CurrentCudaStream()>>>(term, n, sums);
  CheckCudaLaunch(what);
  FinishSumKernel<T><<<1, kCudaThreads, 0, CurrentCudaStream()>>>(sums, blocks, finish);
  CheckCudaLaunch(what);
}

}  // namespace braid

#endif  // BRAID_OPS_COMMON_CUDA_REDUCE_CUH_
