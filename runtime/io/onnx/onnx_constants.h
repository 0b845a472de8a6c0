// Constant tensors of an ONNX graph (initializers, Constant nodes and values folded at import),
// held as float32 or int64, and the folds the importer applies to shape-computing chains.
//
// A ConstantTensor is a value: dims and the elements in row-major order, in `floats` (float32) or
// `ints` (int64; ONNX's int32, int64 and bool tensors are read into it), exactly as many as its
// dims' overflow-checked count (runtime/core/element_count.h): FloatConstant, IntConstant and
// ConstantFromOnnx check it, CheckConstant checks a constant built or re-dimensioned by hand, and
// the folds check their operands with it (the importer empties the elements of a constant it has
// moved into the init net, and restores them before reading it again). Functions throw
// braid::Error (InvalidArgument) naming the tensor for data they cannot read or fold; the caller
// adds the node.
//
//   ConstantTensor w = ConstantFromOnnx(initializer);       // float32 [64, 3, 7, 7]
//   ConstantTensor wt = TransposeMatrix(w2d);                // [K, N] -> [N, K]
//
// Thread safety: ConstantTensor is a value; the functions are pure and usable from any thread.
#ifndef BRAID_RUNTIME_IO_ONNX_ONNX_CONSTANTS_H_
#define BRAID_RUNTIME_IO_ONNX_ONNX_CONSTANTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "runtime/core/dims_text.h"

namespace braid {

struct ConstantTensor {
  bool is_float = true;
  std::vector<int64_t> dims;
  std::vector<float> floats;
  std::vector<int64_t> ints;

  int64_t numel() const;
  // The elements as int64 (floats truncated; throws for one outside int64 or NaN), for shapes,
  // axes and indices.
  std::vector<int64_t> AsInts() const;
  // The elements as float32.
  std::vector<float> AsFloats() const;
};

// Throws unless `c` holds exactly its dims' element count (which must not overflow).
void CheckConstant(const ConstantTensor& c);
ConstantTensor FloatConstant(std::vector<int64_t> dims, std::vector<float> values);
ConstantTensor IntConstant(std::vector<int64_t> dims, std::vector<int64_t> values);

// An ONNX TensorProto (FLOAT, DOUBLE, INT32, INT64, INT8, UINT8 or BOOL; raw_data or typed fields).
// Tensors stored in external files are refused.
ConstantTensor ConstantFromOnnx(const onnx::TensorProto& tensor);

// Folds over constants (ONNX semantics); axes may be negative.
// A Gather or a Concat folds at most kMaxFoldedElements elements (a constant's own size is the
// model's; folds of folds are not).
inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 26;
ConstantTensor GatherConstant(const ConstantTensor& data, const ConstantTensor& indices,
                              int64_t axis);
ConstantTensor ConcatConstants(const std::vector<const ConstantTensor*>& parts, int64_t axis);
// [K, N] -> [N, K].
ConstantTensor TransposeMatrix(const ConstantTensor& matrix);

// `axis` in [-rank, rank) as a non-negative index; throws naming `what` otherwise.
int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& what);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_ONNX_ONNX_CONSTANTS_H_
