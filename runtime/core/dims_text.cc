#include "runtime/core/dims_text.h"

namespace braid {

std::string JoinedInts(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text;
}

std::string DimsText(const std::vector<int64_t>& dims) { return "[" + JoinedInts(dims) + "]"; }

}  // namespace braid
