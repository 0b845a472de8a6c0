// ElementCount: the number of elements of a shape, checked, so that no shape whose size cannot be
// represented ever reaches a tensor, a shape inference or the memory planner.
//
// A shape is valid when every dim is >= 0 and both its element count and its size in bytes (for
// a given element type) fit in int64. Tensor::Reshape/Resize, ShapeInfo::numel and every op's
// shape inference (OpSchema::InferShapes) go through here; ops that build shapes from arguments
// may call it first for an earlier, more specific message.
//
//   int64_t n = ElementCount({2, 3});                        // 6
//   ElementCount({4294967296, 4294967296, 16});              // throws: more than int64 elements
//   ElementCount({1LL << 61, 2}, DType::kFloat32);          // throws: more than int64 bytes
//
// Pure and thread-safe. Errors are braid::Error (InvalidArgument) naming the shape; callers that
// know the op prefix it (the executor and shape inference do).
#ifndef BRAID_RUNTIME_CORE_ELEMENT_COUNT_H_
#define BRAID_RUNTIME_CORE_ELEMENT_COUNT_H_

#include <cstdint>
#include <vector>

#include "braid/dtype.h"

namespace braid {

// The product of `dims`; throws for a negative dim or a product that overflows int64.
int64_t ElementCount(const std::vector<int64_t>& dims);
// As above, and also throws when the size in bytes of `dtype` elements overflows int64.
int64_t ElementCount(const std::vector<int64_t>& dims, DType dtype);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_ELEMENT_COUNT_H_
