// Reshape: the data of input 0 with a new shape (Caffe2's Reshape; any element type).
//
// The new shape is the `shape` argument (ints) or, instead, the contents of an optional second
// input new_shape (1-D int32/int64). In it, 0 copies the input's dim at that index and one -1 is
// inferred from the element count:
//   data [2,3,4], shape [0,-1]   -> [2,12]
//   data [2,3,4], shape [4,-1,2] -> [4,3,2]
// Outputs: reshaped (may be data, in place), and old_shape, an int64 [ndim] of data's dims. With
// new_shape as an input, shape inference cannot know the reshaped dims.
//
// Gradient: Reshape(d reshaped, old_shape) back to data's shape (writing its own old_shape output
// to "<data>_grad_old_shape").
//
// CopyReshaped is the copy Reshape, Flatten and ResizeLike share.
#ifndef BRAID_OPS_TENSOR_RESHAPE_OP_H_
#define BRAID_OPS_TENSOR_RESHAPE_OP_H_

#include <cstdint>
#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// The dims Reshape op `def` gives `data` for the requested shape (0 and -1 as above); throws
// braid::Error naming the input when the request does not fit.
std::vector<int64_t> ReshapedDims(const OperatorDef& def, const ShapeInfo& data,
                                  const std::vector<int64_t>& requested);
// Makes `output` hold input's type and data with `dims` (as many elements); output may be &input.
// On a device the bytes are copied by its context (CUDA: cudaMemcpyAsync on the current stream).
void CopyReshaped(const Tensor& input, Tensor* output, std::vector<int64_t> dims);
// Reshape's work but old_shape, for its CPU and CUDA kernels: checks op's inputs, writes output 0
// and returns data's dims before the reshape.
std::vector<int64_t> ReshapeData(OperatorBase& op);

class ReshapeOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_RESHAPE_OP_H_
