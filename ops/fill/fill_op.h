// FillOp: the shared shape logic of the fill ops (ConstantFill, GaussianFill, UniformFill,
// UniformIntFill, the GivenTensor*Fill ops), as in Caffe2.
//
// Output 0's shape comes from, in order:
//   - input 0's contents, a 1-D int64 (or int32) tensor, when `input_as_shape` = 1;
//   - input 0's shape, when the op has an input;
//   - the `shape` argument (ints) otherwise (no argument: a scalar);
// followed by the `extra_shape` argument's dims. Giving both an input and `shape` is an error.
// A negative dim, or a shape whose element count overflows int64, is an error naming the op.
// A subclass writes the values; random fills draw from OperatorBase::rng(), so a fill with the
// same seed (or output name) produces the same values whatever the schedule.
//
//   class OnesFillOp final : public FillOp {
//    public:
//     OnesFillOp(const OperatorDef& def, Workspace* ws) : FillOp(def, ws, DType::kFloat32) {}
//    protected:
//     void Fill(Tensor* out) override { std::fill_n(out->mutable_data<float>(), out->numel(), 1.f);
//     }
//   };
#ifndef BRAID_OPS_FILL_FILL_OP_H_
#define BRAID_OPS_FILL_FILL_OP_H_

#include <cstdint>
#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

class FillOp : public OperatorBase {
 public:
  FillOp(const OperatorDef& def, Workspace* ws, DType dtype);
  void Run() final;

 protected:
  // Writes every element of `output`, whose type and shape are already set.
  virtual void Fill(Tensor* output) = 0;

 private:
  std::vector<int64_t> ShapeFromInputContents() const;

  DType dtype_;
  bool input_as_shape_;
};

// The output dims from the arguments and, if the op has an input, its dims (see above; not for
// input_as_shape). Throws braid::Error for an input together with `shape`, or negative dims.
std::vector<int64_t> FillShape(const OperatorDef& def, const std::vector<int64_t>* input_dims);
// Shape inference of a fill whose output type is `dtype` (unknown for input_as_shape).
std::vector<ShapeInfo> InferFillShape(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                      DType dtype);
// The shape arguments above (shape, extra_shape, input_as_shape), for the fills' schemas.
const std::vector<ArgSpec>& FillShapeArgs();

}  // namespace braid

#endif  // BRAID_OPS_FILL_FILL_OP_H_
