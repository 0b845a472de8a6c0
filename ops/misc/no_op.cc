#include "ops/misc/no_op.h"

#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid {

BRAID_OPERATOR_SCHEMA(NoOp)
    .NoArgs()
    .AllowInplace({{0, 0}, {1, 1}, {2, 2}, {3, 3}})
    .SetDoc("Does nothing; orders ops in tests and benchmarks.");

BRAID_REGISTER_CPU_OPERATOR(NoOp, NoOp);
#ifdef BRAID_WITH_CUDA
BRAID_REGISTER_OPERATOR(NoOp, kCuda, "", NoOp);
#endif

}  // namespace braid
