#include "runtime/core/shape_inference.h"

#include <algorithm>
#include <set>

#include "braid/status.h"
#include "runtime/core/op_label.h"
#include "runtime/core/workspace.h"

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

namespace {

// Walks `net` in listed order, calling write(blob, shape) for every output as inferred; `known`
// ends holding every blob's shape as last written.
template <typename Fn>
void InferWrites(const NetDef& net, std::map<std::string, ShapeInfo>* known, Fn&& write) {
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    const OpSchema* schema = FindSchema(op.type());
    std::vector<ShapeInfo> inputs;
    for (const std::string& in : op.input()) inputs.push_back((*known)[in]);
    std::vector<ShapeInfo> outputs;
    if (schema != nullptr) {
      try {
        outputs = schema->InferShapes(op, inputs);
      } catch (const Error& e) {
        throw Error(Status(e.status().code(), OpLabelOf(net, i) + ": " + e.status().message()));
      }
    }
    outputs.resize(op.output_size());
    for (int o = 0; o < op.output_size(); ++o) {
      write(op.output(o), outputs[o]);
      (*known)[op.output(o)] = outputs[o];
    }
  }
}

}  // namespace

std::map<std::string, ShapeInfo> InferBlobShapes(const NetDef& net,
                                                 std::map<std::string, ShapeInfo> known) {
  InferWrites(net, &known, [](const std::string&, const ShapeInfo&) {});
  return known;
}

std::map<std::string, int64_t> LargestWrittenBytes(const NetDef& net,
                                                   std::map<std::string, ShapeInfo> known) {
  std::map<std::string, int64_t> largest;
  std::set<std::string> unknown;
  InferWrites(net, &known, [&](const std::string& blob, const ShapeInfo& shape) {
    if (!shape.known) unknown.insert(blob);
    int64_t& bytes = largest[blob];
    bytes = std::max<int64_t>(bytes, shape.known ? static_cast<int64_t>(shape.nbytes()) : 0);
  });
  for (const std::string& blob : unknown) largest.erase(blob);
  return largest;
}

}  // namespace braid
