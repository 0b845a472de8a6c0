// NoOp: does nothing with any number of inputs and outputs. Used to shape dependency graphs in
// scheduling tests and executor benchmarks (outputs are declared but never written).
#ifndef BRAID_OPS_MISC_NO_OP_H_
#define BRAID_OPS_MISC_NO_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class NoOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {}
};

}  // namespace braid

#endif  // BRAID_OPS_MISC_NO_OP_H_
