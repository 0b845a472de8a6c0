// Sigmoid and SigmoidGradient on CUDA devices (ops/activation/sigmoid_op.h).
#include "ops/activation/unary_elementwise_op.cuh"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

struct SigmoidCuda {
  __device__ float operator()(float x) const { return 1.f / (1.f + expf(-x)); }
};
struct SigmoidGradientCuda {
  __device__ float operator()(float y, float dy) const { return dy * y * (1.f - y); }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Sigmoid, kCuda, "", UnaryElementwiseCudaOp<SigmoidCuda>);
BRAID_REGISTER_OPERATOR(SigmoidGradient, kCuda, "", OutputGradientCudaOp<SigmoidGradientCuda>);

}  // namespace braid
