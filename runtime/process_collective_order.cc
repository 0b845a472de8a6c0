#include "runtime/process_collective_order.h"

#include <algorithm>
#include <vector>

#include "runtime/op_schema.h"

namespace braid {

void OrderProcessCollectives(NetDef* net, int workers) {
  workers = std::max(workers, 1);
  std::vector<int> collectives;  // op indices, in net order
  for (int i = 0; i < net->op_size(); ++i) {
    const OpSchema* schema = FindSchema(net->op(i).type());
    if (schema == nullptr || !schema->waits_for_other_processes()) continue;
    if (net->op(i).output_size() == 0) continue;  // validation refuses it
    collectives.push_back(i);
  }
  for (size_t k = workers; k < collectives.size(); ++k) {
    OperatorDef* op = net->mutable_op(collectives[k]);
    const std::string& earlier = net->op(collectives[k - workers]).output(0);
    if (std::find(op->control_input().begin(), op->control_input().end(), earlier) ==
        op->control_input().end()) {
      op->add_control_input(earlier);
    }
  }
}

}  // namespace braid
