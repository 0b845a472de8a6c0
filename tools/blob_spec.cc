#include "tools/blob_spec.h"

#include <algorithm>
#include <charconv>

namespace braid {
namespace {

bool ParseDType(const std::string& name, DType* dtype) {
  for (DType candidate : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                          DType::kUInt8, DType::kBool, DType::kFloat16}) {
    if (name == DTypeName(candidate)) {
      *dtype = candidate;
      return true;
    }
  }
  return false;
}

// "64,1,28,28" -> dims; the empty string is a scalar. Returns the first bad piece, or "".
std::string ParseDims(const std::string& text, std::vector<int64_t>* dims) {
  if (text.empty()) return "";
  size_t start = 0;
  while (true) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string piece = text.substr(start, end - start);
    int64_t value = -1;
    const auto [ptr, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), value);
    if (piece.empty() || ec != std::errc() || ptr != piece.data() + piece.size() || value < 0) {
      return piece.empty() ? "(empty)" : piece;
    }
    dims->push_back(value);
    if (end == text.size()) return "";
    start = end + 1;
  }
}

}  // namespace

BlobSpec ParseBlobSpec(const std::string& text, std::string* error) {
  error->clear();
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    *error = "'" + text + "': expected NAME=DIMS[:DTYPE], e.g. data=64,1,28,28 or label=64:int32";
    return {};
  }
  BlobSpec spec;
  spec.name = text.substr(0, equals);
  std::string dims = text.substr(equals + 1);
  const size_t colon = dims.find(':');
  if (colon != std::string::npos) {
    const std::string dtype = dims.substr(colon + 1);
    if (!ParseDType(dtype, &spec.dtype)) {
      *error = "'" + text + "': unknown dtype '" + dtype +
               "' (float32, float64, int32, int64, uint8 or bool)";
      return {};
    }
    dims.resize(colon);
  }
  const std::string bad = ParseDims(dims, &spec.dims);
  if (!bad.empty()) {
    *error = "'" + text + "': bad dimension '" + bad + "' (non-negative integers, comma-separated)";
    return {};
  }
  return spec;
}

}  // namespace braid
