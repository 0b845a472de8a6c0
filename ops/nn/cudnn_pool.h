// What the CUDA pooling kernels (ops/nn/pool_op.cu, pool_gradient_op.cu) need of a MaxPool,
// AveragePool or their gradient op: the pooling as plain numbers and cuDNN's descriptors for it.
//
// Shapes come from the CPU ops' own functions (ComputePoolShapes, ComputePoolGradientShapes), so
// both devices accept the same ops with the same errors. Modes: MaxPool is
// CUDNN_POOLING_MAX_DETERMINISTIC (the backward adds no atomics); AveragePool's count_include_pad
// picks CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING (divide by the kernel area) or, by default,
// ..._EXCLUDE_PADDING (by the window's elements inside the image), as the CPU op does. Refused,
// since cuDNN pads both sides alike: unequal begin and end pads (pad_t != pad_b or pad_l != pad_r).
//
// Thread safety: the functions are pure; descriptors belong to their caller.
#ifndef BRAID_OPS_NN_CUDNN_POOL_H_
#define BRAID_OPS_NN_CUDNN_POOL_H_

#include <cstdint>
#include <vector>

#include "ops/nn/cudnn_descriptors.h"
#include "proto/braid.pb.h"
#include "runtime/core/op_schema.h"

namespace braid {

struct CudnnPoolProblem {
  std::vector<int64_t> x_dims, y_dims;
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX_DETERMINISTIC;
  Int64Pair kernel{}, stride{1, 1}, pad{0, 0};
};

// The problem of pooling op `def` (average: AveragePool, else MaxPool) over inputs `in`: X for the
// forward op (`gradient` false), X, Y, dY for the gradient op. Throws braid::Error as the CPU op
// does, and InvalidArgument for unequal begin and end pads.
CudnnPoolProblem CudnnPoolProblemOf(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                    bool average, bool gradient);

struct CudnnPoolDescriptors {
  explicit CudnnPoolDescriptors(const CudnnPoolProblem& p);
  TensorDescriptor x, y;  // also dX and dY
  PoolingDescriptor pool;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_CUDNN_POOL_H_
