// ConvSearchOptions: how far a CUDA convolution's algorithm search may go, from Caffe2's cuDNN
// hints on Conv and ConvGradient, which published nets (the model zoo's) carry:
//   exhaustive_search  0: cuDNN's heuristic decides (cudnnGetConvolution*Algorithm_v7's first
//                      candidate that fits the workspace limit), nothing is timed;
//                      1, or absent: the AlgorithmRegistry's mode
//                      (runtime/device/algorithm_registry.h): cuDNN's timed find, unless
//                      BRAID_ALGORITHM_SEARCH=rule pins every search of the process to the
//                      heuristic. (Caffe2 defaulted to the heuristic.)
//   deterministic      1: only algorithms that compute the same bits on every run (cuDNN's
//                      backward-data ALGO_0 and backward-filter ALGO_0 and ALGO_3 add with
//                      atomics), unless no other is supported; 0: any algorithm, the fastest
//                      (Caffe2's default, and PyTorch's unless cudnn.deterministic); absent: 1
//                      where the environment has BRAID_CUDNN_DETERMINISTIC=1 when it is first
//                      read (ops/common/env_switch.h), else 0
//   ws_nbytes_limit    the most bytes a candidate's workspace may take (default 1 GiB,
//                      kDefaultConvWorkspaceLimit); never more than the device can give without
//                      eating into its caching allocator's reserve (ConvWorkspaceLimit).
// Without a cap, the first timed search on an 80 GiB GPU would size one workspace at the device's
// free memory, tens of GiB, for an algorithm that gains a few percent.
//
//   const ConvSearchOptions o = ConvSearchOptionsOf(def);
//   const int64_t limit = ConvWorkspaceLimit(SearchWorkspaceLimit(device), o.workspace_limit);
//
// Thread-safe functions of their arguments (and of BRAID_CUDNN_DETERMINISTIC, read once). Built
// with or without the CUDA backend.
#ifndef BRAID_OPS_NN_CONV_SEARCH_OPTIONS_H_
#define BRAID_OPS_NN_CONV_SEARCH_OPTIONS_H_

#include <cstdint>

#include "proto/braid.pb.h"

namespace braid {

inline constexpr int64_t kDefaultConvWorkspaceLimit = int64_t{1} << 30;

struct ConvSearchOptions {
  bool timed = true;           // false: exhaustive_search = 0
  bool deterministic = false;  // deterministic = 1
  int64_t workspace_limit = kDefaultConvWorkspaceLimit;
};

// The options of Conv or ConvGradient op `def`; throws braid::Error (InvalidArgument naming the
// op) for a negative ws_nbytes_limit.
ConvSearchOptions ConvSearchOptionsOf(const OperatorDef& def);

// The workspace limit of a search: `cap`, but at most `available` (the device's bytes beyond the
// reserve; < 0: unknown or unlimited, so `cap` alone).
int64_t ConvWorkspaceLimit(int64_t available, int64_t cap);

}  // namespace braid

#endif  // BRAID_OPS_NN_CONV_SEARCH_OPTIONS_H_
