// DimsText: how braid writes a list of dims (or of any int64 values) in messages and keys, once.
//
//   DimsText({2, 3, 4});    // "[2,3,4]": errors, Tensor::ShapeString, ONNX, checkpoints
//   JoinedInts({2, 3, 4});  // "2,3,4": the conv algorithm-cache keys (algorithm_registry.h)
//
// Pure and thread-safe.
#ifndef BRAID_RUNTIME_CORE_DIMS_TEXT_H_
#define BRAID_RUNTIME_CORE_DIMS_TEXT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace braid {

std::string JoinedInts(const std::vector<int64_t>& values);
std::string DimsText(const std::vector<int64_t>& dims);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_DIMS_TEXT_H_
