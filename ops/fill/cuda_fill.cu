#include "ops/fill/cuda_fill.h"

#include <string>

#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"

namespace braid {
namespace {

// u in (0, 1] -> lo + (hi - lo) u, computed in double (hi - lo may overflow float) and clamped to
// [lo, hi] against rounding.
__global__ void ScaleUniformKernel(float* values, int64_t n, float lo, float hi) {
  BRAID_CUDA_KERNEL_LOOP(i, n) {
    const double u = values[i];
    const float v = static_cast<float>(lo + (static_cast<double>(hi) - lo) * u);
    values[i] = v > hi ? hi : (v < lo ? lo : v);
  }
}

// Two 32-bit draws make a 64-bit x; floor(x * range / 2^64) is uniform in [0, range) up to a bias
// of range / 2^64 <= 2^-32.
__global__ void UniformIntKernel(const uint32_t* bits, int64_t n, int32_t lo, uint64_t range,
                                 int32_t* out) {
  BRAID_CUDA_KERNEL_LOOP(i, n) {
    const uint64_t x = (static_cast<uint64_t>(bits[2 * i]) << 32) | bits[2 * i + 1];
    out[i] = static_cast<int32_t>(static_cast<int64_t>(lo) +
                                  static_cast<int64_t>(__umul64hi(x, range)));
  }
}

template <typename T>
__global__ void ConstantKernel(T* out, int64_t n, T value) {
  BRAID_CUDA_KERNEL_LOOP(i, n) out[i] = value;
}

}  // namespace

void RefuseShapeFromDevice(const OperatorBase& op) {
  if (!op.args().Get<bool>("input_as_shape", false)) return;
  ThrowInvalidArgument(op.type() + " on " + op.device().ToString() +
                       ": input_as_shape = 1 is not supported on CUDA devices: the shape input '" +
                       (op.InputSize() > 0 ? op.def().input(0) : std::string()) +
                       "' would be in device memory, which the host may not read; give the "
                       "`shape` argument, or run this fill on the CPU");
}

OpRandomGenerator::~OpRandomGenerator() { DestroyCurandGenerator(generator_, device_); }

curandGenerator_t OpRandomGenerator::Reseeded(std::mt19937_64& rng) {
  const uint64_t seed = rng();
  if (generator_ == nullptr) {
    device_ = CurrentCudaDevice();
    generator_ = CreateCurandGenerator(seed);
  } else {
    CheckCurand(curandSetPseudoRandomGeneratorSeed(generator_, seed),
                "curandSetPseudoRandomGeneratorSeed");
  }
  CheckCurand(curandSetGeneratorOffset(generator_, 0), "curandSetGeneratorOffset");
  CheckCurand(curandSetStream(generator_, CurrentCudaStream()), "curandSetStream");
  return generator_;
}

void QueueNormal(curandGenerator_t generator, float* out, int64_t n, float mean, float stddev) {
  if (n == 0) return;
  if (n % 2 == 0) {
    CheckCurand(curandGenerateNormal(generator, out, static_cast<size_t>(n), mean, stddev),
                "curandGenerateNormal");
    return;
  }
  DeviceScratch even(static_cast<size_t>(n + 1) * sizeof(float));
  float* samples = static_cast<float*>(even.get());
  CheckCurand(curandGenerateNormal(generator, samples, static_cast<size_t>(n + 1), mean, stddev),
              "curandGenerateNormal");
  CheckCuda(cudaMemcpyAsync(out, samples, static_cast<size_t>(n) * sizeof(float),
                            cudaMemcpyDeviceToDevice, CurrentCudaStream()),
            "cudaMemcpyAsync", CurrentCudaDevice());
}

void QueueUniform(curandGenerator_t generator, float* out, int64_t n, float lo, float hi) {
  if (n == 0) return;
  CheckCurand(curandGenerateUniform(generator, out, static_cast<size_t>(n)),
              "curandGenerateUniform");
  ScaleUniformKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(out, n, lo, hi);
  CheckCudaLaunch("ScaleUniformKernel");
}

void QueueUniformInt(curandGenerator_t generator, int32_t* out, int64_t n, int32_t lo,
                     int32_t hi) {
  if (n == 0) return;
  DeviceScratch scratch(static_cast<size_t>(2 * n) * sizeof(uint32_t));
  uint32_t* bits = static_cast<uint32_t*>(scratch.get());
  CheckCurand(curandGenerate(generator, bits, static_cast<size_t>(2 * n)), "curandGenerate");
  const uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo) + 1;
  UniformIntKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(bits, n, lo, range,
                                                                             out);
  CheckCudaLaunch("UniformIntKernel");
}

template <typename T>
void QueueConstant(T* out, int64_t n, T value) {
  if (n == 0) return;
  ConstantKernel<T><<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(out, n, value);
  CheckCudaLaunch("ConstantKernel");
}

template void QueueConstant<float>(float*, int64_t, float);
template void QueueConstant<double>(double*, int64_t, double);
template void QueueConstant<int32_t>(int32_t*, int64_t, int32_t);
template void QueueConstant<int64_t>(int64_t*, int64_t, int64_t);
template void QueueConstant<uint8_t>(uint8_t*, int64_t, uint8_t);
template void QueueConstant<bool>(bool*, int64_t, bool);
template void QueueConstant<uint16_t>(uint16_t*, int64_t, uint16_t);  // float16 bits

}  // namespace braid
