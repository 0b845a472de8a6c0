#include "runtime/core/op_label.h"

namespace braid {

std::string OpLabelOf(const NetDef& net, int i) {
  const OperatorDef& op = net.op(i);
  return "net '" + net.name() + "' op #" + std::to_string(i) + " (" + op.type() + " '" + op.name() +
         "')";
}

}  // namespace braid
