#include "runtime/shape_inference.h"

#include "runtime/net_validation.h"
#include "runtime/status.h"
#include "runtime/workspace.h"

namespace braid {

ShapeInfo ShapeOf(const Tensor& tensor) {
  return ShapeInfo{tensor.dtype(), tensor.shape(), tensor.has_storage()};
}

std::map<std::string, ShapeInfo> ShapesOfWorkspaceBlobs(const NetDef& net, const Workspace& ws) {
  std::map<std::string, ShapeInfo> shapes;
  for (const OperatorDef& op : net.op()) {
    for (const std::string& in : op.input()) {
      const Tensor* t = ws.GetBlob(in);
      if (t != nullptr && shapes.count(in) == 0) shapes[in] = ShapeOf(*t);
    }
  }
  return shapes;
}

std::map<std::string, ShapeInfo> InferBlobShapes(const NetDef& net,
                                                 std::map<std::string, ShapeInfo> known) {
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    const OpSchema* schema = FindSchema(op.type());
    std::vector<ShapeInfo> inputs;
    for (const std::string& in : op.input()) inputs.push_back(known[in]);
    std::vector<ShapeInfo> outputs;
    if (schema != nullptr) {
      try {
        outputs = schema->InferShapes(op, inputs);
      } catch (const Error& e) {
        throw Error(Status(e.status().code(), OpLabelOf(net, i) + ": " + e.status().message()));
      }
    }
    outputs.resize(op.output_size());
    for (int o = 0; o < op.output_size(); ++o) known[op.output(o)] = outputs[o];
  }
  return known;
}

}  // namespace braid
