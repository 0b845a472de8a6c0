#include "runtime/process_collective_order.h"

#include <algorithm>
#include <string>

#include "runtime/op_schema.h"

namespace braid {

void OrderProcessCollectives(NetDef* net) {
  int previous = -1;  // the last collective so far, in net order
  for (int i = 0; i < net->op_size(); ++i) {
    const OpSchema* schema = FindSchema(net->op(i).type());
    if (schema == nullptr || !schema->waits_for_other_processes()) continue;
    if (net->op(i).output_size() == 0) continue;  // validation refuses it
    if (previous >= 0) {
      const std::string earlier = net->op(previous).output(0);
      OperatorDef* op = net->mutable_op(i);
      if (std::find(op->control_input().begin(), op->control_input().end(), earlier) ==
          op->control_input().end()) {
        op->add_control_input(earlier);
      }
    }
    previous = i;
  }
}

}  // namespace braid
