// BatchMatMul: a matrix product per batch element, float32 (Caffe2's BatchMatMul; ONNX MatMul
// exports to it with broadcast=1).
//
//   A [..., M, K] (or [..., K, M] with trans_a=1), B [..., K, N] (or [..., N, K] with trans_b=1)
//   ->  Y [..., M, N],   Y[b] = op(A[b]) op(B[b])
//
// Arguments, Caffe2's names and defaults: trans_a 0, trans_b 0, broadcast 0. Both inputs need at
// least 2 dims. With broadcast=0, A and B have the same number of dims and the same batch dims
// (all but the last two). With broadcast=1 the batch dims broadcast as numpy's do (aligned from
// the right, a 1 stretching to the other's size; a missing dim counts as 1), so [2, 3, M, K]
// times [K, N] is fine. Caffe2's 1-D operands (vectors, broadcast=1) are refused.
//
//   type: "BatchMatMul" input: "A" input: "B" output: "Y" arg { name: "trans_b" i: 1 }
//
// Gradient (broadcast=0 only, as in Caffe2): two BatchMatMuls, e.g. dA = dY B^T, dB = A^T dY for
// trans_a = trans_b = 0, with the transposes each case needs. One cblas_sgemm per batch element.
#ifndef BRAID_OPS_MATH_BATCH_MATMUL_OP_H_
#define BRAID_OPS_MATH_BATCH_MATMUL_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class BatchMatMulOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_BATCH_MATMUL_OP_H_
