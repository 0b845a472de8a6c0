// ImportContext: the state of one ONNX import, shared by the node converters
// (runtime/io/onnx/onnx_*_converters.h): the graph's constants and static shapes, the names that
// stand for other values (Identity, Dropout, a folded Pad), and the two nets being built.
//
// Converters read a node's inputs through Input/Constant/Shape, write ops with Emit, and weights
// with Weight (an ONNX constant, filled once in the init net) or NewWeight (a constant the importer
// derived, e.g. a transposed matrix). Fail throws braid::Error naming the model, the node (index,
// op type, name), the model's opset and the message, as the opset lowering does:
//   "m.onnx: node #4 (Split 'split'): opset 18: attribute 'num_outputs' 3 ..."
//
// Thread safety: one import, one thread.
#ifndef BRAID_RUNTIME_IO_ONNX_ONNX_IMPORT_CONTEXT_H_
#define BRAID_RUNTIME_IO_ONNX_ONNX_IMPORT_CONTEXT_H_

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "braid/status.h"
#include "onnx/onnx_pb.h"
#include "proto/braid.pb.h"
#include "runtime/core/argument.h"  // AddIntArg and the other argument writers
#include "runtime/io/onnx/onnx_constants.h"

namespace braid {

// A zero Pad of H and W (pads top, left, bottom, right) waiting for the Conv or AveragePool that
// reads its output.
struct PendingPad {
  std::string source;  // the unpadded value
  std::array<int64_t, 4> pads{};
};

// "node #3 (Conv 'conv1')", or "node #3 (Conv)" for an unnamed node: how errors name a node.
std::string NodeLabel(int index, const onnx::NodeProto& node);

// The Error ImportContext::Fail throws: its message already names the model and the node.
class NodeError : public Error {
 public:
  using Error::Error;
};

class ImportContext {
 public:
  // `model_opset`: the model's default-domain opset; `opset`: the form its nodes have now (the
  // same, or 17 for a model lowered from 18 to 21: runtime/io/onnx/onnx_opset_lowering.h).
  ImportContext(std::string source, int64_t model_opset, int64_t opset, NetDef* init_net,
                NetDef* predict_net);

  const std::string& source() const { return source_; }
  // What converters branch on: the opset whose form the nodes have.
  int64_t opset() const { return opset_; }
  // What errors name: the opset the model declares.
  int64_t model_opset() const { return model_opset_; }

  // The node being converted (for errors and op names).
  void BeginNode(int index, const onnx::NodeProto* node);
  const onnx::NodeProto& node() const { return *node_; }
  // Throws NodeError of `code` (InvalidArgument: the model's mistake); the message gets
  // "<source>: <node label>: opset <model_opset>: " in front, so callers never name the opset.
  [[noreturn]] void Fail(const std::string& message,
                         StatusCode code = StatusCode::kInvalidArgument) const;

  // Inputs of the current node: whether input i is given (ONNX leaves optional ones empty).
  bool HasInput(int i) const;
  // The blob holding input i (aliases followed); fails for a value folded into a pad.
  std::string Input(int i);
  bool IsConstant(const std::string& onnx_name) const;
  bool InputIsConstant(int i) const { return HasInput(i) && IsConstant(node_->input(i)); }
  const ConstantTensor& InputConstant(int i, const std::string& role) const;
  // InputConstant, failing unless it holds exactly one element (Clip's min, Pad's value).
  const ConstantTensor& InputScalar(int i, const std::string& role) const;
  std::vector<int64_t> InputShape(int i) const;
  std::vector<int64_t> ShapeOf(const std::string& onnx_name) const;
  // The current node's output i; fails unless it has exactly `count` outputs that are used.
  std::string Output(int i) const { return node_->output(i); }
  void RequireOutputs(int count) const;

  // Values: static shapes from shape inference, constants, aliases, pads.
  void SetShape(const std::string& name, std::vector<int64_t> dims);
  void SetConstant(const std::string& name, ConstantTensor value);
  void SetAlias(const std::string& name, const std::string& target);
  void SetPendingPad(const std::string& name, PendingPad pad);
  // The pad waiting on input i of the current node, if any; consumes nothing.
  const PendingPad* InputPad(int i) const;
  void MarkGraphOutput(const std::string& name) { graph_outputs_.insert(name); }
  bool IsGraphOutput(const std::string& name) const { return graph_outputs_.count(name) > 0; }

  // Adds an op to the predict net, named after the current node.
  OperatorDef* Emit(const std::string& type, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& outputs);
  // The blob of ONNX constant `onnx_name`, filled in the init net (once).
  std::string Weight(const std::string& onnx_name);
  // A new blob "<hint>" (made unique) filled in the init net with `value`.
  std::string NewWeight(const std::string& hint, ConstantTensor value);
  // A blob name no value of the graph uses: "<hint>", "<hint>_1", ...
  std::string UniqueName(const std::string& hint);
  void ReserveName(const std::string& name) { used_names_.insert(name); }

 private:
  void FillInInitNet(const std::string& blob, const ConstantTensor& value);
  // The constant `name`, its elements copied back from its fill op if they were released.
  const ConstantTensor& ConstantData(const std::string& name) const;

  std::string source_;
  int64_t model_opset_;
  int64_t opset_;
  NetDef* init_net_;
  NetDef* predict_net_;
  int node_index_ = -1;
  const onnx::NodeProto* node_ = nullptr;
  // A weight's elements are released once its fill op holds them (so the importer holds a model's
  // weights about once), and copied back by ConstantData if a fold reads them after all.
  mutable std::map<std::string, ConstantTensor> constants_;
  mutable std::map<std::string, int> released_;  // constant -> index of its fill op in init_net_
  std::map<std::string, std::vector<int64_t>> shapes_;
  std::map<std::string, std::string> aliases_;
  std::map<std::string, PendingPad> pads_;
  std::set<std::string> graph_outputs_;
  std::set<std::string> weights_filled_;
  std::set<std::string> used_names_;
};

// ONNX attribute access on a node; Fail for an attribute of the wrong kind.
int64_t IntAttr(const ImportContext& ctx, const std::string& name, int64_t default_value);
float FloatAttr(const ImportContext& ctx, const std::string& name, float default_value);
std::string StringAttr(const ImportContext& ctx, const std::string& name,
                       const std::string& default_value);
std::vector<int64_t> IntsAttr(const ImportContext& ctx, const std::string& name);
bool HasAttr(const ImportContext& ctx, const std::string& name);
const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, const std::string& name);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_ONNX_ONNX_IMPORT_CONTEXT_H_
