#include "runtime/io/onnx/onnx_opset_lowering.h"

#include <map>
#include <set>
#include <vector>

#include "braid/status.h"
#include "runtime/io/onnx/onnx_constants.h"
#include "runtime/io/onnx/onnx_import_context.h"  // NodeLabel

namespace braid {
namespace {

// The Reduce ops whose `axes` became an input at opset 18. Only ReduceMean has a converter; the
// others are refused as unsupported op types before lowering.
const std::set<std::string>& ReduceOpsWithAxesInput() {
  static const std::set<std::string> ops = {"ReduceL1",        "ReduceL2",   "ReduceLogSum",
                                            "ReduceLogSumExp", "ReduceMax",  "ReduceMean",
                                            "ReduceMin",       "ReduceProd", "ReduceSumSquare"};
  return ops;
}

class Lowering {
 public:
  Lowering(onnx::ModelProto* model, int64_t opset, std::string source)
      : graph_(model->mutable_graph()), opset_(opset), source_(std::move(source)) {
    for (const onnx::TensorProto& t : graph_->initializer()) {
      initializers_[t.name()] = &t;
      shapes_[t.name()] = {t.dims().begin(), t.dims().end()};
      names_.insert(t.name());
    }
    for (const auto* list : {&graph_->input(), &graph_->value_info(), &graph_->output()}) {
      for (const onnx::ValueInfoProto& v : *list) RecordShape(v);
    }
    for (const onnx::NodeProto& node : graph_->node()) {
      for (const std::string& out : node.output()) names_.insert(out);
      if (node.op_type() == "Constant" && node.output_size() == 1) {
        constant_nodes_[node.output(0)] = &node;
      }
    }
  }

  void Run() {
    for (int i = 0; i < graph_->node_size(); ++i) {
      onnx::NodeProto* node = graph_->mutable_node(i);
      if (!node->domain().empty() && node->domain() != "ai.onnx") continue;
      index_ = i;
      node_ = node;
      const std::string& type = node->op_type();
      if (ReduceOpsWithAxesInput().count(type)) {
        LowerReduce();
      } else if (type == "Split") {
        LowerSplit();
      } else if (type == "Pad") {
        LowerPad();
      } else if (type == "Resize") {
        LowerResize();
      } else if (type == "Cast") {
        RemoveAttr("saturate");
      }
    }
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw Error(Status::InvalidArgument(source_ + ": " + NodeLabel(index_, *node_) + ": opset " +
                                        std::to_string(opset_) + ": " + message));
  }

  void RecordShape(const onnx::ValueInfoProto& v) {
    names_.insert(v.name());
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    std::vector<int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      dims.push_back(d.has_dim_value() ? d.dim_value() : -1);  // -1: symbolic or unknown
    }
    shapes_[v.name()] = std::move(dims);
  }

  bool HasInput(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }

  // Input i as a constant (an initializer or a Constant node's value); `role` names it.
  ConstantTensor InputConstant(int i, const std::string& role) const {
    const std::string& name = node_->input(i);
    const std::string what = "input " + std::to_string(i) + " '" + role + "' ('" + name + "')";
    try {
      if (auto it = initializers_.find(name); it != initializers_.end()) {
        return ConstantFromOnnx(*it->second);
      }
      if (auto it = constant_nodes_.find(name); it != constant_nodes_.end()) {
        for (const onnx::AttributeProto& attr : it->second->attribute()) {
          if (attr.name() == "value") return ConstantFromOnnx(attr.t());
          if (attr.name() == "value_ints") {
            return IntConstant({attr.ints_size()}, {attr.ints().begin(), attr.ints().end()});
          }
          if (attr.name() == "value_floats") {
            return FloatConstant({attr.floats_size()},
                                 {attr.floats().begin(), attr.floats().end()});
          }
        }
      }
    } catch (const Error& e) {
      Fail(what + ": " + e.status().message());
    }
    Fail(what + " must be a constant (an initializer or a Constant node)");
  }

  // The declared shape of `name`; empty with *known false when the model declares none.
  std::vector<int64_t> DeclaredShape(const std::string& name, bool* known) const {
    auto it = shapes_.find(name);
    *known = it != shapes_.end();
    return *known ? it->second : std::vector<int64_t>{};
  }

  const onnx::AttributeProto* Attr(const std::string& name) const {
    for (const onnx::AttributeProto& attr : node_->attribute()) {
      if (attr.name() == name) return &attr;
    }
    return nullptr;
  }

  void RemoveAttr(const std::string& name) {
    auto* attrs = node_->mutable_attribute();
    for (int i = attrs->size() - 1; i >= 0; --i) {
      if (attrs->Get(i).name() == name) attrs->DeleteSubrange(i, 1);
    }
  }

  // Drops input i and every input after it that is empty, so no empty input ends the list.
  void RemoveInput(int i) {
    if (i < node_->input_size()) node_->mutable_input(i)->clear();
    int size = node_->input_size();
    while (size > 0 && node_->input(size - 1).empty()) --size;
    node_->mutable_input()->DeleteSubrange(size, node_->input_size() - size);
  }

  // A new int64 or float initializer named after `hint` (made unique); returns its name.
  std::string AddInitializer(const std::string& hint, const ConstantTensor& value) {
    std::string name = hint;
    for (int i = 1; names_.count(name); ++i) name = hint + "_" + std::to_string(i);
    names_.insert(name);
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    for (int64_t d : value.dims) t->add_dims(d);
    if (value.is_float) {
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->mutable_float_data()->Add(value.floats.begin(), value.floats.end());
    } else {
      t->set_data_type(onnx::TensorProto::INT64);
      t->mutable_int64_data()->Add(value.ints.begin(), value.ints.end());
    }
    initializers_[name] = t;
    shapes_[name] = value.dims;
    return name;
  }

  // ReduceX(data, axes?) {keepdims, noop_with_empty_axes} -> ReduceX(data) {axes, keepdims}.
  void LowerReduce() {
    std::vector<int64_t> axes;
    if (HasInput(1)) axes = InputConstant(1, "axes").AsInts();
    const onnx::AttributeProto* noop = Attr("noop_with_empty_axes");
    const bool identity = axes.empty() && noop != nullptr && noop->i() != 0;
    RemoveAttr("noop_with_empty_axes");
    RemoveInput(1);
    if (identity) {
      node_->set_op_type("Identity");
      node_->clear_attribute();
      return;
    }
    if (axes.empty()) return;  // every axis, the attribute's default
    onnx::AttributeProto* attr = node_->add_attribute();
    attr->set_name("axes");
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t a : axes) attr->add_ints(a);
  }

  // Split {num_outputs}: checked against the outputs here and kept for the converter, which
  // sizes the parts (ceil(dim / n), the last what remains) from the inferred shape: the input's
  // shape may be fixed (OnnxImportOptions::input_shape) or inferred only after this lowering.
  void LowerSplit() {
    const onnx::AttributeProto* num = Attr("num_outputs");
    if (num == nullptr) return;
    const int64_t n = num->i();
    if (n < 1 || n != node_->output_size()) {
      Fail("attribute 'num_outputs' is " + std::to_string(n) + " but the node has " +
           std::to_string(node_->output_size()) + " outputs");
    }
    if (HasInput(1)) Fail("attribute 'num_outputs' and input 1 'split' are both given");
  }

  // Pad(data, pads, constant_value?, axes?) -> Pad(data, pads over every axis, constant_value?).
  void LowerPad() {
    if (!HasInput(3)) return;
    const std::vector<int64_t> axes = InputConstant(3, "axes").AsInts();
    const std::vector<int64_t> pads = InputConstant(1, "pads").AsInts();
    bool known = false;
    const int64_t rank = static_cast<int64_t>(DeclaredShape(node_->input(0), &known).size());
    if (!known) Fail("input 3 'axes' needs the declared rank of input 0, which the model lacks");
    if (pads.size() != 2 * axes.size()) {
      Fail("input 1 'pads' holds " + std::to_string(pads.size()) + " values for the " +
           std::to_string(axes.size()) + " axes of input 3 'axes'");
    }
    std::vector<int64_t> full(2 * rank, 0);
    const int64_t count = static_cast<int64_t>(axes.size());
    std::set<int64_t> seen;
    for (int64_t j = 0; j < count; ++j) {
      if (axes[j] < -rank || axes[j] >= rank) {
        Fail("input 3 'axes' holds " + std::to_string(axes[j]) + ", outside a rank of " +
             std::to_string(rank));
      }
      const int64_t a = axes[j] < 0 ? axes[j] + rank : axes[j];
      if (!seen.insert(a).second) {
        Fail("input 3 'axes' names axis " + std::to_string(a) + " twice " + DimsText(axes));
      }
      full[a] = pads[j];
      full[a + rank] = pads[j + count];
    }
    *node_->mutable_input(1) =
        AddInitializer(node_->output(0) + "_pads", IntConstant({2 * rank}, full));
    RemoveInput(3);
  }

  // Resize-18/19's additions: refused where they change the result, dropped where they do not.
  void LowerResize() {
    if (const onnx::AttributeProto* a = Attr("antialias"); a != nullptr && a->i() != 0) {
      Fail("attribute 'antialias' = 1 is not supported");
    }
    if (const onnx::AttributeProto* a = Attr("coordinate_transformation_mode");
        a != nullptr && a->s() == "half_pixel_symmetric") {
      Fail("attribute 'coordinate_transformation_mode' 'half_pixel_symmetric' is not supported");
    }
    const bool has_sizes = HasInput(3);
    if (const onnx::AttributeProto* a = Attr("keep_aspect_ratio_policy");
        a != nullptr && a->s() != "stretch" && has_sizes) {
      Fail("attribute 'keep_aspect_ratio_policy' '" + a->s() +
           "' with input 3 'sizes' is not supported (only 'stretch')");
    }
    if (const onnx::AttributeProto* a = Attr("axes"); a != nullptr) {
      if (has_sizes || !HasInput(2)) {
        Fail("attribute 'axes' is supported only with input 2 'scales'");
      }
      WidenResizeScales(std::vector<int64_t>(a->ints().begin(), a->ints().end()));
    }
    RemoveAttr("antialias");
    RemoveAttr("keep_aspect_ratio_policy");
    RemoveAttr("axes");
  }

  // Scales given for `axes` only become scales of every axis, 1 for the others.
  void WidenResizeScales(const std::vector<int64_t>& axes) {
    const std::vector<float> scales = InputConstant(2, "scales").AsFloats();
    bool known = false;
    const int64_t rank = static_cast<int64_t>(DeclaredShape(node_->input(0), &known).size());
    if (!known) Fail("attribute 'axes' needs the declared rank of input 0, which the model lacks");
    if (scales.size() != axes.size()) {
      Fail("input 2 'scales' holds " + std::to_string(scales.size()) + " values for " +
           std::to_string(axes.size()) + " axes");
    }
    std::vector<float> full(rank, 1.f);
    std::set<int64_t> seen;
    for (size_t j = 0; j < axes.size(); ++j) {
      if (axes[j] < -rank || axes[j] >= rank) {
        Fail("attribute 'axes' holds " + std::to_string(axes[j]) + ", outside a rank of " +
             std::to_string(rank));
      }
      const int64_t a = axes[j] < 0 ? axes[j] + rank : axes[j];
      if (!seen.insert(a).second) {
        Fail("attribute 'axes' names axis " + std::to_string(a) + " twice " + DimsText(axes));
      }
      full[a] = scales[j];
    }
    *node_->mutable_input(2) =
        AddInitializer(node_->output(0) + "_scales", FloatConstant({rank}, std::move(full)));
  }

  onnx::GraphProto* graph_;
  int64_t opset_;
  std::string source_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::map<std::string, const onnx::NodeProto*> constant_nodes_;
  std::map<std::string, std::vector<int64_t>> shapes_;
  std::set<std::string> names_;
  int index_ = -1;
  onnx::NodeProto* node_ = nullptr;
};

}  // namespace

void LowerToOpset17(onnx::ModelProto* model, int64_t opset, const std::string& source) {
  Lowering(model, opset, source).Run();
  for (onnx::OperatorSetIdProto& set : *model->mutable_opset_import()) {
    if (set.domain().empty() || set.domain() == "ai.onnx") set.set_version(kLoweredOpset);
  }
}

}  // namespace braid
