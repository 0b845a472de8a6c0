// BlobSpec: a blob's name, dtype and shape as given on a command line, "NAME=DIMS[:DTYPE]".
//
// DIMS is a comma-separated list of non-negative integers (empty for a scalar); DTYPE is one of
// include/braid/dtype.h's names (float32, float64, float16, int32, int64, uint8, bool), float32
// when omitted.
//
//   std::string error;
//   BlobSpec data = ParseBlobSpec("data=64,1,28,28", &error);  // float32 [64, 1, 28, 28]
//   BlobSpec label = ParseBlobSpec("label=64:int32", &error);  // int32 [64]
//   ParseBlobSpec("x=2,a", &error);  // error: "'x=2,a': bad dimension 'a' (...)"
//
// Pure functions; thread-safe.
#ifndef BRAID_TOOLS_BLOB_SPEC_H_
#define BRAID_TOOLS_BLOB_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "braid/dtype.h"

namespace braid {

struct BlobSpec {
  std::string name;
  std::vector<int64_t> dims;
  DType dtype = DType::kFloat32;
};

// Parses `text`; on failure returns an empty spec and sets *error to a message quoting the text.
BlobSpec ParseBlobSpec(const std::string& text, std::string* error);

}  // namespace braid

#endif  // BRAID_TOOLS_BLOB_SPEC_H_
