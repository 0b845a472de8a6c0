// Tanh and TanhGradient on CUDA devices (ops/activation/tanh_op.h).
#include "ops/activation/unary_elementwise_op.cuh"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

struct TanhCuda {
  __device__ float operator()(float x) const { return tanhf(x); }
};
struct TanhGradientCuda {
  __device__ float operator()(float y, float dy) const { return dy * (1.f - y * y); }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Tanh, kCuda, "", UnaryElementwiseCudaOp<TanhCuda>);
BRAID_REGISTER_OPERATOR(TanhGradient, kCuda, "", OutputGradientCudaOp<TanhGradientCuda>);

}  // namespace braid
