// Reading a small 1-D int32 or int64 input tensor as a list of int64 (a shape, split sizes), as
// Reshape's new_shape and Split's split inputs are given.
//
//   std::vector<int64_t> sizes = ReadIntList(*this, 1);
//
// Throws braid::Error naming the input when it is not a 1-D int32/int64 tensor with data. A list on
// a CUDA device is copied to the host, waiting for the device: only for ops that run synchronously.
#ifndef BRAID_OPS_TENSOR_INT_LIST_INPUT_H_
#define BRAID_OPS_TENSOR_INT_LIST_INPUT_H_

#include <cstdint>
#include <vector>

#include "runtime/core/operator.h"

namespace braid {

std::vector<int64_t> ReadIntList(const OperatorBase& op, int i);

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_INT_LIST_INPUT_H_
