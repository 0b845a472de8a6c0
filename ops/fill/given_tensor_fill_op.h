// GivenTensorFill and its typed siblings: output 0 holds the values listed in the op's `values`
// argument (Caffe2's ops; the init nets of Caffe2's model zoo are made of them).
//
//   op type                            `values` field            output type
//   GivenTensorFill                    floats                    float32
//   GivenTensorDoubleFill              floats                    float64
//   GivenTensorIntFill                 ints (in int32's range)   int32
//   GivenTensorInt64Fill               ints                      int64
//   GivenTensorBoolFill                ints (each 0 or 1)        bool
//   GivenTensorByteStringToUInt8Fill   one string (`strings`     uint8, one element per byte
//                                      with one entry, or `s`)
// GivenTensorFill also takes Caffe2's `dtype` argument (TensorProto.DataType numbers): FLOAT=1 and
// DOUBLE=13 read floats, INT32=2, BOOL=5 and INT64=10 read ints; INT16 and STRING are refused
// (braid has no such tensors).
//
// The output shape follows FillOp (ops/fill/fill_op.h: `shape`, `extra_shape`, an input's shape,
// or `input_as_shape`); its element count must equal the number of values (no shape: a scalar,
// one value). Errors name the op type and both counts, a value that does not fit the output type,
// or a `values` argument in the wrong field.
//
//   op { type: "GivenTensorFill" output: "conv1_w"
//        arg { name: "shape" ints: 2 ints: 2 } arg { name: "values" floats: [1, 2, 3, 4] } }
//
// The values are read from the op's OperatorDef on every run (no second copy is held); init nets
// run once. No gradient.
#ifndef BRAID_OPS_FILL_GIVEN_TENSOR_FILL_OP_H_
#define BRAID_OPS_FILL_GIVEN_TENSOR_FILL_OP_H_

#include <cstdint>
#include <vector>

#include "ops/fill/fill_op.h"

namespace braid {

class GivenTensorFillOp final : public FillOp {
 public:
  GivenTensorFillOp(const OperatorDef& def, Workspace* ws);

 protected:
  void Fill(Tensor* output) override;

 private:
  int64_t value_count_;
};

// The output type of GivenTensor*Fill op `def`; throws braid::Error for an unsupported `dtype`.
DType GivenTensorFillDType(const OperatorDef& def);
// How many values `def` lists; throws braid::Error when `values` is in the wrong field.
int64_t GivenTensorFillValueCount(const OperatorDef& def);
// Throws braid::Error naming the op and both counts unless `dims` holds `value_count` elements.
void CheckGivenValueCount(const OperatorDef& def, int64_t value_count,
                          const std::vector<int64_t>& dims);

}  // namespace braid

#endif  // BRAID_OPS_FILL_GIVEN_TENSOR_FILL_OP_H_
