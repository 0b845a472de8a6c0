// Small ONNX models built in C++ for the importer's tests, and a runner that imports one, fills
// its weights, feeds its input and runs the predict net.
//
//   OnnxTestGraph g(13);
//   g.Input("x", {1, 2, 4, 4});
//   g.Node("Relu", {"x"}, {"y"});
//   g.Output("y");
//   std::vector<float> y = RunImported(g, x_values);
#ifndef BRAID_TESTS_RUNTIME_ONNX_ONNX_TEST_GRAPH_H_
#define BRAID_TESTS_RUNTIME_ONNX_ONNX_TEST_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "runtime/io/onnx/onnx_import.h"

namespace braid::test {

class OnnxTestGraph {
 public:
  explicit OnnxTestGraph(int64_t opset);

  void Input(const std::string& name, const std::vector<int64_t>& dims);
  void Output(const std::string& name);
  void Initializer(const std::string& name, const std::vector<int64_t>& dims,
                   const std::vector<float>& values);
  void IntInitializer(const std::string& name, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& values);
  onnx::NodeProto* Node(const std::string& type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);

  std::string Bytes() const;
  onnx::ModelProto& model() { return model_; }

 private:
  onnx::ModelProto model_;
};

void SetAttr(onnx::NodeProto* node, const std::string& name, int64_t value);
void SetAttr(onnx::NodeProto* node, const std::string& name, float value);
void SetAttr(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values);
void SetAttr(onnx::NodeProto* node, const std::string& name, const std::string& value);

// Imports `graph` (ASSERT-style: an import error fails the test and gives an empty model).
ModelFolder Import(const OnnxTestGraph& graph, const OnnxImportOptions& options = {});

struct RunSettings {
  std::string executor = "simple";  // or "dag"
  int workers = 2;
  bool plan_memory = false;
  OnnxImportOptions import_options;  // e.g. an input_shape other than the model's
};

// Imports `graph`, runs its init net, feeds `input` and runs the predict net; returns its first
// external output.
std::vector<float> RunImported(const OnnxTestGraph& graph, const std::vector<float>& input,
                               const RunSettings& settings = {});

// Deterministic values in [-1, 1).
std::vector<float> TestValues(int64_t count, uint32_t seed);

}  // namespace braid::test

#endif  // BRAID_TESTS_RUNTIME_ONNX_ONNX_TEST_GRAPH_H_
