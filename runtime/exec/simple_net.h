// SimpleNet: runs ops one after another in listed order on the calling thread ("simple"). Ops on a
// device are launched on stream 0 of their device (runtime/exec/launch_plan.h), so devices run at
// once while the host goes on launching. The first failing op stops the run; its Status is
// returned. Thread safety: see runtime/exec/net.h.
#ifndef BRAID_RUNTIME_EXEC_SIMPLE_NET_H_
#define BRAID_RUNTIME_EXEC_SIMPLE_NET_H_

#include "runtime/exec/net.h"

namespace braid {

class SimpleNet final : public Net {
 public:
  SimpleNet(const NetDef& def, Workspace* ws) : Net(def, ws, /*workers=*/1) {
    PlanExecution(BuildDataflow(def), std::vector<int>(def.op_size(), 0), /*workers=*/1);
  }

 private:
  void RunOps(bool /*first_run*/) override {
    ScratchScope scratch(&scratch_area(0));
    RunInListedOrder();
  }
};

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_SIMPLE_NET_H_
