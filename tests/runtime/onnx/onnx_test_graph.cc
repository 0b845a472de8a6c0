#include "runtime/onnx/onnx_test_graph.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "runtime/core/argument.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"

namespace braid::test {
namespace {

void SetDims(onnx::ValueInfoProto* value, const std::vector<int64_t>& dims) {
  auto* type = value->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) type->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::AttributeProto* NewAttr(onnx::NodeProto* node, const std::string& name,
                              onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(type);
  return attr;
}

}  // namespace

OnnxTestGraph::OnnxTestGraph(int64_t opset) {
  model_.set_ir_version(7);
  model_.set_producer_name("braid tests");
  onnx::OperatorSetIdProto* set = model_.add_opset_import();
  set->set_domain("");
  set->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

void OnnxTestGraph::Input(const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* input = model_.mutable_graph()->add_input();
  input->set_name(name);
  SetDims(input, dims);
}

void OnnxTestGraph::Output(const std::string& name) {
  onnx::ValueInfoProto* output = model_.mutable_graph()->add_output();
  output->set_name(name);
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

void OnnxTestGraph::Initializer(const std::string& name, const std::vector<int64_t>& dims,
                                const std::vector<float>& values) {
  onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  // Raw little-endian bytes, as PyTorch's exporter writes them.
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()),
                              values.size() * sizeof(float)));
}

void OnnxTestGraph::IntInitializer(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<int64_t>& values) {
  onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

onnx::NodeProto* OnnxTestGraph::Node(const std::string& type,
                                     const std::vector<std::string>& inputs,
                                     const std::vector<std::string>& outputs) {
  onnx::NodeProto* node = model_.mutable_graph()->add_node();
  node->set_op_type(type);
  node->set_name(type + "_" + std::to_string(model_.graph().node_size() - 1));
  for (const std::string& in : inputs) node->add_input(in);
  for (const std::string& out : outputs) node->add_output(out);
  return node;
}

std::string OnnxTestGraph::Bytes() const { return model_.SerializeAsString(); }

void SetAttr(onnx::NodeProto* node, const std::string& name, int64_t value) {
  NewAttr(node, name, onnx::AttributeProto::INT)->set_i(value);
}

void SetAttr(onnx::NodeProto* node, const std::string& name, float value) {
  NewAttr(node, name, onnx::AttributeProto::FLOAT)->set_f(value);
}

void SetAttr(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* attr = NewAttr(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

void SetAttr(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  NewAttr(node, name, onnx::AttributeProto::STRING)->set_s(value);
}

ModelFolder Import(const OnnxTestGraph& graph, const OnnxImportOptions& options) {
  ModelFolder model;
  const Status status = ImportOnnxBytes(graph.Bytes(), "test.onnx", options, &model);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return model;
}

std::vector<float> RunImported(const OnnxTestGraph& graph, const std::vector<float>& input,
                               const RunSettings& settings) {
  ModelFolder model = Import(graph, settings.import_options);
  if (model.predict_net.external_output_size() == 0) return {};
  Workspace ws;
  EXPECT_TRUE(ws.RunNetOnce(model.init_net).ok());
  Tensor* x = ws.CreateBlob(model.inputs[0].name);
  x->Resize(DType::kFloat32, model.inputs[0].shape);
  EXPECT_EQ(x->numel(), static_cast<int64_t>(input.size()));
  if (x->numel() != static_cast<int64_t>(input.size())) return {};
  std::copy(input.begin(), input.end(), x->mutable_data<float>());
  model.predict_net.set_type(settings.executor);
  Argument* workers = model.predict_net.add_arg();
  workers->set_name("num_workers");
  workers->set_i(settings.workers);
  Net* net = ws.CreateNet(model.predict_net);
  std::unique_ptr<NetMemory> memory;
  if (settings.plan_memory) {
    MemoryPlanOptions options;
    options.verify = true;
    memory = PlanNetMemory(*net, &ws, options);
  }
  const Status run = net->Run();
  EXPECT_TRUE(run.ok()) << run.ToString();
  const Tensor* y = ws.GetBlob(model.predict_net.external_output(0));
  if (!run.ok() || y == nullptr) return {};
  return std::vector<float>(y->data<float>(), y->data<float>() + y->numel());
}

std::vector<float> TestValues(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(count);
  for (float& x : v) x = uniform(rng);
  return v;
}

}  // namespace braid::test
