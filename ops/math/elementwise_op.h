// BinaryElementwiseOp: C = f(A, B) elementwise, the kernel shared by Add, Sub, Mul and Div.
//
// A and B hold one type: float32, int32 or int64. C gets A's type and shape. B has A's shape, or,
// with Caffe2's legacy `broadcast` = 1, the shape of a contiguous run of A's dims starting at
// `axis` (default: A's trailing dims; B's trailing 1-dims are ignored), repeated over the rest:
//   A [2,3,4] + B [3,4], broadcast=1          -> C[i,j,k] = A[i,j,k] + B[j,k]
//   A [2,3,4] * B [3],   broadcast=1, axis=1  -> C[i,j,k] = A[i,j,k] * B[j]
// C may be A, or B when B has as many elements as A (the in-place pairs {0,0} and {1,0}).
// A functor that divides by B declares `static constexpr bool kDividesByB = true`: an integer B
// holding a zero is then refused (naming B) before anything is written.
//
//   struct AddFunctor { template <typename T> T operator()(T a, T b) const { return a + b; } };
//   using AddOp = BinaryElementwiseOp<AddFunctor>;
#ifndef BRAID_OPS_MATH_ELEMENTWISE_OP_H_
#define BRAID_OPS_MATH_ELEMENTWISE_OP_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "ops/common/dtype_dispatch.h"
#include "ops/common/op_checks.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"
#include "runtime/core/shape_inference.h"

namespace braid {

// A viewed as [outer, inner_b, inner] with B as [inner_b]: C[o, j, p] = f(A[o, j, p], B[j]).
struct BroadcastSizes {
  int64_t outer = 1;
  int64_t inner_b = 1;
  int64_t inner = 1;
};

// The broadcast of op `def` for inputs a and b; throws braid::Error naming both blobs when their
// types or shapes do not fit, or when C would overwrite a smaller B in place.
BroadcastSizes ElementwiseBroadcast(const OperatorDef& def, const ShapeInfo& a, const ShapeInfo& b);
// The reverse of the broadcast: b[j] = scale * sum over o, p of a[o, j, p] (accumulated in double),
// for the gradients of a broadcast B (SumReduceLike, SubGradient).
void ReduceOverBroadcast(const BroadcastSizes& s, const float* a, double scale, float* b);
// Schema shape inference of Add, Mul and their kin: C has A's type and shape.
std::vector<ShapeInfo> InferElementwiseShape(const OperatorDef& def,
                                             const std::vector<ShapeInfo>& in);

// Throws braid::Error naming input 1 of `op` when one of its n values is 0.
template <typename T>
void CheckNoZeroDivisor(const OperatorBase& op, const T* divisor, int64_t n);

template <typename Functor>
constexpr bool DividesByB() {
  if constexpr (requires { Functor::kDividesByB; }) {
    return Functor::kDividesByB;
  } else {
    return false;
  }
}

template <typename Functor>
class BinaryElementwiseOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32, DType::kInt32, DType::kInt64});
    CheckInputType(*this, 1, {Input(0).dtype()});
    DispatchArithmetic(Input(0).dtype(),
                       [this](auto zero) { this->template RunTyped<decltype(zero)>(); });
  }

 private:
  template <typename T>
  void RunTyped() {
    const Tensor& a = Input(0);
    const Tensor& b = Input(1);
    const BroadcastSizes s = ElementwiseBroadcast(def(), ShapeOf(a), ShapeOf(b));
    if constexpr (std::is_integral_v<T> && DividesByB<Functor>()) {
      CheckNoZeroDivisor(*this, b.data<T>(), b.numel());
    }
    T* c = Output(0, a.dtype(), a.shape())->template mutable_data<T>();
    const T* as = a.data<T>();  // read after mutable_data: C may be A or B
    const T* bs = b.data<T>();
    const Functor f;
    for (int64_t o = 0; o < s.outer; ++o) {
      const int64_t base = o * s.inner_b * s.inner;
      if (s.inner == 1) {
        for (int64_t j = 0; j < s.inner_b; ++j) c[base + j] = f(as[base + j], bs[j]);
        continue;
      }
      for (int64_t j = 0; j < s.inner_b; ++j) {
        const int64_t row = base + j * s.inner;
        for (int64_t p = 0; p < s.inner; ++p) c[row + p] = f(as[row + p], bs[j]);
      }
    }
  }
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_ELEMENTWISE_OP_H_
