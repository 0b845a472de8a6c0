// What braid_run reports about each external output of a net: a checksum line, the top classes of
// an image classifier's output, and the .npy file name --save-outputs writes it to.
//
//   output prob shape float32[2,1000] sum=2 abs_sum=2 fnv=0123456789abcdef
//   top-5 prob image 0: 281 (0.4123), 285 (0.2011), 282 (0.0912), 287 (0.0301), 356 (0.0122)
//
// fnv is FNV-1a (64 bit) over the tensor's raw bytes, so two runs agree bit for bit exactly when
// their checksum lines are equal. A classifier's output is a float tensor [N, C] (or [N, C, 1, 1]
// as pooled nets leave it) with C >= k; top classes are ordered by score, ties by class index.
//
// Pure functions over host tensors in the plain layout; thread-safe.
#ifndef BRAID_TOOLS_OUTPUT_REPORT_H_
#define BRAID_TOOLS_OUTPUT_REPORT_H_

#include <string>

#include "runtime/core/tensor.h"

namespace braid {

// "output NAME shape float32[2,3] sum=.. abs_sum=.. fnv=..".
std::string ChecksumLine(const std::string& name, const Tensor& host);

// One line per image of `host`'s k best classes, or "" when `host` is not a classifier's output.
std::string TopClassesLines(const std::string& name, const Tensor& host, int k = 5);

// "NAME.npy" with every character outside [A-Za-z0-9._-] replaced by '_' (and a leading '.' too,
// so that no name escapes the folder or hides in it).
std::string OutputFileName(const std::string& blob);

}  // namespace braid

#endif  // BRAID_TOOLS_OUTPUT_REPORT_H_
