// BRAID_HOST_DEVICE marks a function compiled for the host and, in .cu files (under nvcc), for
// CUDA devices too, so that one definition serves a CPU kernel and a CUDA kernel and their results
// cannot drift apart (ops/train/learning_rate_schedule.h, ops/nn/channel_reduce_order.h).
//
//   BRAID_HOST_DEVICE inline int64_t Twice(int64_t x) { return 2 * x; }
//
// RoundedProduct(a, b) is a * b rounded to double, never fused with a following addition into an
// FMA (nvcc fuses by default; so do host compilers targeting FMA hardware): where the host and a
// device must compute the same bits, write every product through it.
#ifndef BRAID_OPS_COMMON_HOST_DEVICE_H_
#define BRAID_OPS_COMMON_HOST_DEVICE_H_

#ifdef __CUDACC__
#define BRAID_HOST_DEVICE __host__ __device__
#else
#define BRAID_HOST_DEVICE
#endif

namespace braid {

BRAID_HOST_DEVICE inline double RoundedProduct(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);  // an intrinsic nvcc never contracts
#else
  volatile double product = a * b;  // stored, so a following addition reads the rounded value
  return product;
#endif
}

}  // namespace braid

#endif  // BRAID_OPS_COMMON_HOST_DEVICE_H_
