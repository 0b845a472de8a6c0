// What the fills' CUDA kernels (ops/fill/*_op.cu) share: the rule that their shape comes from the
// host, a cuRAND generator per op, and the kernels that write constants and map cuRAND's samples
// onto the CPU fills' ranges.
//
//   class GaussianFillCudaOp final : public GaussianFillOp {
//     ... GaussianFillCudaOp(def, ws) : GaussianFillOp(def, ws) { RefuseShapeFromDevice(*this); }
//     void Fill(Tensor* out) override {
//       QueueNormal(random_.Reseeded(rng()), out->mutable_data<float>(), out->numel(), mean_, std_);
//     }
//     OpRandomGenerator random_;
//   };
//
// Every Queue* function only queues work on CurrentCudaStream() and throws braid::Error naming the
// failed call. The values differ from the CPU fills' (another generator) but follow the same
// distributions, and depend only on the op's rng() (its seed), so runs are reproducible.
//
// Thread safety: an OpRandomGenerator belongs to one op, which one thread runs at a time.
#ifndef BRAID_OPS_FILL_CUDA_FILL_H_
#define BRAID_OPS_FILL_CUDA_FILL_H_

#include <curand.h>

#include <cstdint>
#include <random>

#include "runtime/core/operator.h"

namespace braid {

// Throws braid::Error (InvalidArgument) when fill `op`, on a CUDA device, has input_as_shape = 1:
// its shape input would be in device memory, which the host may not read while queueing kernels.
void RefuseShapeFromDevice(const OperatorBase& op);

// A Philox cuRAND generator, made on the first Reseeded (holding the device's lock: it allocates
// device memory, ops/common/cuda_kernel.h CreateCurandGenerator) and destroyed with its owner.
class OpRandomGenerator {
 public:
  OpRandomGenerator() = default;
  ~OpRandomGenerator();
  OpRandomGenerator(const OpRandomGenerator&) = delete;
  OpRandomGenerator& operator=(const OpRandomGenerator&) = delete;

  // The generator, seeded with the next draw of `rng` at offset 0, queueing on
  // CurrentCudaStream(): the samples of a run depend only on the op's random stream.
  curandGenerator_t Reseeded(std::mt19937_64& rng);

 private:
  curandGenerator_t generator_ = nullptr;
  Device device_;  // the device it was made on
};

// n samples of N(mean, stddev^2) (cuRAND draws normals in pairs: an odd n goes via scratch).
void QueueNormal(curandGenerator_t generator, float* out, int64_t n, float mean, float stddev);
// n samples uniform in [lo, hi] (cuRAND's (0, 1] scaled and shifted, clamped to hi).
void QueueUniform(curandGenerator_t generator, float* out, int64_t n, float lo, float hi);
// n integers uniform in [lo, hi], both included (64 random bits per sample: a bias below 2^-32).
void QueueUniformInt(curandGenerator_t generator, int32_t* out, int64_t n, int32_t lo, int32_t hi);
// out[0, n) = value; instantiated for float, double, int32_t, int64_t, uint8_t, bool and uint16_t
// (float16 bits).
template <typename T>
void QueueConstant(T* out, int64_t n, T value);

}  // namespace braid

#endif  // BRAID_OPS_FILL_CUDA_FILL_H_
