#include "ops/nn/cudnn_pool.h"

#include <string>

#include "ops/common/op_checks.h"
#include "ops/nn/pool_gradient_op.h"
#include "ops/nn/pool_op.h"

namespace braid {

CudnnPoolProblem CudnnPoolProblemOf(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                    bool average, bool gradient) {
  const PoolKind kind = average ? PoolKind::kAverage : PoolKind::kMax;
  const PoolShapes s =
      gradient ? ComputePoolGradientShapes(def, in, kind) : ComputePoolShapes(def, in[0], kind);
  const ConvPoolWindow& w = s.window;
  RequireSymmetricPads(def, w, s.x_dims, "run it on the CPU");
  CudnnPoolProblem p;
  p.x_dims = s.x_dims;
  p.y_dims = s.y_dims;
  if (!average) {
    p.mode = CUDNN_POOLING_MAX_DETERMINISTIC;
  } else if (s.algorithm == dnnl::algorithm::pooling_avg_include_padding) {
    p.mode = CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  } else {
    p.mode = CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  }
  p.kernel = w.kernel;
  p.stride = w.stride;
  p.pad = w.pad_begin;
  return p;
}

CudnnPoolDescriptors::CudnnPoolDescriptors(const CudnnPoolProblem& p)
    : x(NchwTensorDescriptor(p.x_dims)),
      y(NchwTensorDescriptor(p.y_dims)),
      pool(MakePoolingDescriptor(p.mode, p.kernel, p.pad, p.stride)) {}

}  // namespace braid
