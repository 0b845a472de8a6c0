// The arguments a NetDef itself may carry (NetDef.arg), which the executors read, and their check.
//
//   num_workers                 int, 0 to kMaxNetThreads; 0 (the default): one worker per hardware
//                               thread. Caffe2's deprecated NetDef.num_workers field is read when
//                               the argument is absent, and checked alike.
//   first_iter_only_one_worker  int, 0 or 1; dag nets (runtime/exec/dag_net.h). Default
//                               (FirstRunIsSingleThreaded): 1 when the net has a collective op or
//                               an op whose schema says it allocates lazily, else 0.
//   intra_op_threads            int, 0 to kMaxNetThreads; 0 (the default): the executor shares the
//                               cores out (runtime/exec/intra_op_threads.h).
//   strict_args                 int, 0 or 1; 0 (the default): an op argument its schema does not
//                               declare is ignored, as Caffe2 ignores it, with one warning per op
//                               type and name (none for Caffe2's engine hints), unless it is a
//                               misspelling or changes results (runtime/core/arg_spec.h
//                               CheckArguments); 1: every such argument is an error.
// Any other name is an error, as is another kind of value or a value out of range.
//
//   CheckNetArgs(def);   // throws "net 'n': argument 'num_workers' = -3 is out of range (...)"
//
// Pure functions; thread-safe.
#ifndef BRAID_RUNTIME_EXEC_NET_ARGS_H_
#define BRAID_RUNTIME_EXEC_NET_ARGS_H_

#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/arg_spec.h"

namespace braid {

inline constexpr char kNumWorkersArg[] = "num_workers";
inline constexpr char kFirstIterOnlyOneWorkerArg[] = "first_iter_only_one_worker";
inline constexpr char kIntraOpThreadsArg[] = "intra_op_threads";
inline constexpr char kStrictArgsArg[] = "strict_args";
inline constexpr int kMaxNetThreads = 1024;

const std::vector<ArgSpec>& NetArgSpecs();
// Throws braid::Error (InvalidArgument) naming the net, the argument, its value and what is valid.
void CheckNetArgs(const NetDef& net);
// Whether a dag net runs its first Run one op at a time: first_iter_only_one_worker, or its
// default.
bool FirstRunIsSingleThreaded(const NetDef& net);

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_NET_ARGS_H_
