#include "runtime/io/onnx/onnx_import_context.h"

#include "braid/status.h"

namespace braid {

ImportContext::ImportContext(std::string source, int64_t model_opset, int64_t opset,
                             NetDef* init_net, NetDef* predict_net)
    : source_(std::move(source)),
      model_opset_(model_opset),
      opset_(opset),
      init_net_(init_net),
      predict_net_(predict_net) {}

void ImportContext::BeginNode(int index, const onnx::NodeProto* node) {
  node_index_ = index;
  node_ = node;
}

std::string NodeLabel(int index, const onnx::NodeProto& node) {
  std::string label = "node #" + std::to_string(index) + " (" + node.op_type();
  if (!node.name().empty()) label += " '" + node.name() + "'";
  return label + ")";
}

void ImportContext::Fail(const std::string& message, StatusCode code) const {
  std::string where = source_ + ": ";
  // The model's opset, once, in the wording of the opset lowering's errors.
  if (node_ != nullptr) {
    where += NodeLabel(node_index_, *node_) + ": opset " + std::to_string(model_opset_) + ": ";
  }
  throw NodeError(Status(code, where + message));
}

bool ImportContext::HasInput(int i) const {
  return i < node_->input_size() && !node_->input(i).empty();
}

std::string ImportContext::Input(int i) {
  if (!HasInput(i)) Fail("input " + std::to_string(i) + " is required");
  std::string name = node_->input(i);
  if (pads_.count(name)) {
    Fail("reads '" + name + "', the output of a Pad that braid folds only into Conv and "
         "AveragePool");
  }
  while (aliases_.count(name)) name = aliases_.at(name);
  if (constants_.count(name)) return Weight(name);
  return name;
}

bool ImportContext::IsConstant(const std::string& onnx_name) const {
  std::string name = onnx_name;
  while (aliases_.count(name)) name = aliases_.at(name);
  return constants_.count(name) > 0;
}

const ConstantTensor& ImportContext::InputConstant(int i, const std::string& role) const {
  if (!InputIsConstant(i)) {
    Fail(role + " (input " + std::to_string(i) + (HasInput(i) ? " '" + node_->input(i) + "'" : "") +
         ") must be a constant (an initializer, or computed from constants)");
  }
  std::string name = node_->input(i);
  while (aliases_.count(name)) name = aliases_.at(name);
  return ConstantData(name);
}

const ConstantTensor& ImportContext::InputScalar(int i, const std::string& role) const {
  const ConstantTensor& constant = InputConstant(i, role);
  if (constant.numel() != 1) {
    Fail(role + " (input " + std::to_string(i) + " '" + node_->input(i) + "') must hold one " +
         "element; it holds " + std::to_string(constant.numel()));
  }
  return constant;
}

const ConstantTensor& ImportContext::ConstantData(const std::string& name) const {
  ConstantTensor& constant = constants_.at(name);
  auto released = released_.find(name);
  if (released == released_.end()) return constant;
  for (const Argument& arg : init_net_->op(released->second).arg()) {
    if (arg.name() != "values") continue;
    constant.floats.assign(arg.floats().begin(), arg.floats().end());
    constant.ints.assign(arg.ints().begin(), arg.ints().end());
  }
  released_.erase(released);
  CheckConstant(constant);
  return constant;
}

std::vector<int64_t> ImportContext::InputShape(int i) const {
  if (!HasInput(i)) Fail("input " + std::to_string(i) + " is required");
  return ShapeOf(node_->input(i));
}

std::vector<int64_t> ImportContext::ShapeOf(const std::string& onnx_name) const {
  std::string name = onnx_name;
  while (aliases_.count(name)) name = aliases_.at(name);
  if (constants_.count(name)) return constants_.at(name).dims;
  auto it = shapes_.find(onnx_name);
  if (it == shapes_.end()) it = shapes_.find(name);
  if (it == shapes_.end()) {
    Fail("the shape of '" + onnx_name + "' is unknown (ONNX shape inference gave no static shape)");
  }
  return it->second;
}

void ImportContext::RequireOutputs(int count) const {
  for (int i = count; i < node_->output_size(); ++i) {
    if (!node_->output(i).empty()) {
      Fail("output " + std::to_string(i) + " ('" + node_->output(i) +
           "') is not supported: braid imports inference graphs");
    }
  }
  if (node_->output_size() < count) Fail("expected " + std::to_string(count) + " outputs");
}

void ImportContext::SetShape(const std::string& name, std::vector<int64_t> dims) {
  shapes_[name] = std::move(dims);
}

void ImportContext::SetConstant(const std::string& name, ConstantTensor value) {
  CheckConstant(value);
  constants_[name] = std::move(value);
  released_.erase(name);
}

void ImportContext::SetAlias(const std::string& name, const std::string& target) {
  aliases_[name] = target;
}

void ImportContext::SetPendingPad(const std::string& name, PendingPad pad) {
  pads_[name] = std::move(pad);
}

const PendingPad* ImportContext::InputPad(int i) const {
  if (!HasInput(i)) return nullptr;
  auto it = pads_.find(node_->input(i));
  return it == pads_.end() ? nullptr : &it->second;
}

OperatorDef* ImportContext::Emit(const std::string& type, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs) {
  OperatorDef* op = predict_net_->add_op();
  op->set_type(type);
  op->set_name(node_->name().empty() ? node_->op_type() + "_" + std::to_string(node_index_)
                                     : node_->name());
  for (const std::string& in : inputs) op->add_input(in);
  for (const std::string& out : outputs) {
    op->add_output(out);
    used_names_.insert(out);
  }
  return op;
}

std::string ImportContext::Weight(const std::string& onnx_name) {
  std::string name = onnx_name;
  while (aliases_.count(name)) name = aliases_.at(name);
  if (!weights_filled_.count(name)) {
    ConstantTensor& constant = constants_.at(name);
    FillInInitNet(name, constant);
    std::vector<float>().swap(constant.floats);  // the fill op holds them now
    std::vector<int64_t>().swap(constant.ints);
    released_[name] = init_net_->op_size() - 1;
  }
  return name;
}

std::string ImportContext::NewWeight(const std::string& hint, ConstantTensor value) {
  CheckConstant(value);
  const std::string name = UniqueName(hint);
  FillInInitNet(name, value);
  return name;
}

std::string ImportContext::UniqueName(const std::string& hint) {
  std::string name = hint;
  for (int i = 1; used_names_.count(name) || constants_.count(name) || shapes_.count(name); ++i) {
    name = hint + "_" + std::to_string(i);
  }
  used_names_.insert(name);
  return name;
}

void ImportContext::FillInInitNet(const std::string& blob, const ConstantTensor& value) {
  weights_filled_.insert(blob);
  used_names_.insert(blob);
  OperatorDef* fill = init_net_->add_op();
  fill->set_type(value.is_float ? "GivenTensorFill" : "GivenTensorInt64Fill");
  fill->add_output(blob);
  AddIntsArg(fill, "shape", value.dims);
  Argument* values = fill->add_arg();
  values->set_name("values");
  if (value.is_float) {
    values->mutable_floats()->Add(value.floats.begin(), value.floats.end());
  } else {
    values->mutable_ints()->Add(value.ints.begin(), value.ints.end());
  }
  predict_net_->add_external_input(blob);
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

bool HasAttr(const ImportContext& ctx, const std::string& name) {
  return FindAttr(ctx.node(), name) != nullptr;
}

int64_t IntAttr(const ImportContext& ctx, const std::string& name, int64_t default_value) {
  const onnx::AttributeProto* attr = FindAttr(ctx.node(), name);
  if (attr == nullptr) return default_value;
  if (attr->type() != onnx::AttributeProto::INT) ctx.Fail("attribute '" + name + "' must be an int");
  return attr->i();
}

float FloatAttr(const ImportContext& ctx, const std::string& name, float default_value) {
  const onnx::AttributeProto* attr = FindAttr(ctx.node(), name);
  if (attr == nullptr) return default_value;
  if (attr->type() != onnx::AttributeProto::FLOAT) {
    ctx.Fail("attribute '" + name + "' must be a float");
  }
  return attr->f();
}

std::string StringAttr(const ImportContext& ctx, const std::string& name,
                       const std::string& default_value) {
  const onnx::AttributeProto* attr = FindAttr(ctx.node(), name);
  if (attr == nullptr) return default_value;
  if (attr->type() != onnx::AttributeProto::STRING) {
    ctx.Fail("attribute '" + name + "' must be a string");
  }
  return attr->s();
}

std::vector<int64_t> IntsAttr(const ImportContext& ctx, const std::string& name) {
  const onnx::AttributeProto* attr = FindAttr(ctx.node(), name);
  if (attr == nullptr) return {};
  if (attr->type() != onnx::AttributeProto::INTS) {
    ctx.Fail("attribute '" + name + "' must be a list of ints");
  }
  return {attr->ints().begin(), attr->ints().end()};
}

}  // namespace braid
