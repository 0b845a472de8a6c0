#include "runtime/core/element_count.h"

#include <string>

#include "braid/status.h"
#include "runtime/core/dims_text.h"

namespace braid {

int64_t ElementCount(const std::vector<int64_t>& dims) {
  bool has_zero = false;
  for (int64_t d : dims) {
    if (d < 0) {
      throw Error(Status::InvalidArgument("negative dimension in shape " + DimsText(dims)));
    }
    has_zero |= d == 0;
  }
  // A zero dim makes the shape empty whatever the others are (and their product may overflow).
  if (has_zero) return 0;
  int64_t count = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(count, d, &count)) {
      throw Error(Status::InvalidArgument("shape " + DimsText(dims) +
                                          " has more elements than int64 can count (the product "
                                          "of its dims overflows 2^63 - 1)"));
    }
  }
  return count;
}

int64_t ElementCount(const std::vector<int64_t>& dims, DType dtype) {
  const int64_t count = ElementCount(dims);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(DTypeSize(dtype)), &bytes)) {
    throw Error(Status::InvalidArgument("shape " + DimsText(dims) + " of " + DTypeName(dtype) +
                                        " takes more bytes than int64 can count (" +
                                        std::to_string(count) + " elements of " +
                                        std::to_string(DTypeSize(dtype)) + " bytes)"));
  }
  return count;
}

}  // namespace braid
