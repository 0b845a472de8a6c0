// SimpleNet: runs ops one after another in listed order on the calling thread ("simple").
// The first failing op stops the run; its Status is returned. Thread safety: see runtime/net.h.
#ifndef BRAID_RUNTIME_SIMPLE_NET_H_
#define BRAID_RUNTIME_SIMPLE_NET_H_

#include "runtime/net.h"

namespace braid {

class SimpleNet final : public Net {
 public:
  SimpleNet(const NetDef& def, Workspace* ws) : Net(def, ws, /*workers=*/1) {}

 private:
  Status RunOps(bool /*first_run*/) override {
    ScratchScope scratch(&scratch_area(0));
    return RunInListedOrder();
  }
};

}  // namespace braid

#endif  // BRAID_RUNTIME_SIMPLE_NET_H_
