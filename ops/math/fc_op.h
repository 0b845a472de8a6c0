// FC: a fully connected layer, Y = X W^T + b, float32 (Caffe2's FC).
//
// X is read as a matrix [M, K] split at `axis` (default 1): M is the product of the dims before it,
// K of the rest. W is read as [N, K] split at `axis_w` (default 1); b has N elements. Y has X's
// dims before `axis` followed by N:
//   X [8, 3, 4], W [5, 12], b [5]           -> Y [8, 5]
//   X [8, 3, 4], W [5, 4],  b [5], axis=2   -> Y [8, 3, 5]
// The product is one OpenBLAS sgemm call.
//
// FCGradient (Caffe2's): inputs X, W, dY; outputs dW (W's shape), db ([N]) and, optionally, dX
// (X's shape): dW = dY^T X, db = column sums of dY, dX = dY W; two sgemm calls. The forward op's
// `axis`/`axis_w` arguments are copied to it.
#ifndef BRAID_OPS_MATH_FC_OP_H_
#define BRAID_OPS_MATH_FC_OP_H_

#include <cstdint>
#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

struct FcSizes {
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> y_dims;
};

// The sizes of FC op `def` for inputs X, W, b; throws braid::Error naming the blobs when their
// shapes do not fit or a type is not float32.
FcSizes ComputeFcSizes(const OperatorDef& def, const std::vector<ShapeInfo>& in);

// The sizes of FCGradient op `def` for inputs X, W, dY; throws braid::Error naming the blobs when
// dY is not X's rows by W's rows or a type is not float32.
FcSizes ComputeFcGradientSizes(const OperatorDef& def, const std::vector<ShapeInfo>& in);

class FCOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class FCGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_FC_OP_H_
