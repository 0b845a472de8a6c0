#include "runtime/exec/init_net.h"

#include <malloc.h>

#include <string>

#include "runtime/core/op_label.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net_validation.h"

namespace braid {

Status RunInitNet(NetDef init_net, Workspace* ws) {
  Status status = StatusFromCall([&] { ValidateNet(init_net, *ws); });
  if (!status.ok()) return status;
  // The net's name, type, device and arguments for each one-op net; its ops are set aside while
  // it is copied, so that their arguments are not.
  google::protobuf::RepeatedPtrField<OperatorDef> ops;
  ops.Swap(init_net.mutable_op());
  NetDef header = init_net;
  ops.Swap(init_net.mutable_op());
  // The whole net's external outputs were validated above; one op writes only its own.
  header.clear_external_output();
  for (int i = 0; i < init_net.op_size(); ++i) {
    const std::string label = OpLabelOf(init_net, i);
    {
      NetDef one_op = header;
      one_op.add_op()->Swap(init_net.mutable_op(i));
      const std::string one_label = OpLabelOf(one_op, 0);
      status = ws->RunNetOnce(one_op);
      if (!status.ok()) {  // name the op by its place in the init net
        std::string message = status.message();
        const size_t at = message.find(one_label);
        if (at != std::string::npos) message.replace(at, one_label.size(), label);
        return Status(status.code(), message);
      }
    }  // one_op and the op's arguments are freed here (a cleared protobuf field keeps its memory)
#ifdef __GLIBC__
    malloc_trim(0);  // and their pages given back: glibc keeps large freed blocks otherwise
#endif
  }
  return Status::OK();
}

}  // namespace braid
