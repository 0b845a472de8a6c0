#include "runtime/io/onnx/onnx_import.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <set>

#include "onnx/shape_inference/implementation.h"
#include "runtime/io/onnx/onnx_converters.h"
#include "runtime/io/onnx/onnx_external_data.h"
#include "runtime/io/onnx/onnx_opset_lowering.h"

namespace braid {
namespace {

constexpr int64_t kMinOpset = 9, kMaxOpset = 21;

[[noreturn]] void Throw(const std::string& message) {
  throw Error(Status::InvalidArgument(message));
}

int64_t DefaultDomainOpset(const onnx::ModelProto& model, const std::string& source) {
  for (const onnx::OperatorSetIdProto& set : model.opset_import()) {
    if (set.domain().empty() || set.domain() == "ai.onnx") {
      if (set.version() < kMinOpset || set.version() > kMaxOpset) {
        Throw(source + ": opset " + std::to_string(set.version()) + " is outside the opsets " +
              std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
              " braid imports");
      }
      return set.version();
    }
  }
  Throw(source + ": the model imports no version of the default ONNX opset");
}

// One error listing every op type no converter handles, with counts, in name order.
void CheckSupportedOps(const onnx::GraphProto& graph, const std::string& source) {
  std::map<std::string, int> unsupported;
  for (const onnx::NodeProto& node : graph.node()) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!default_domain) {
      ++unsupported[node.domain() + "." + node.op_type()];
    } else if (!NodeConverters().count(node.op_type())) {
      ++unsupported[node.op_type()];
    }
  }
  if (unsupported.empty()) return;
  std::string list;
  for (const auto& [type, count] : unsupported) {
    list += (list.empty() ? "" : ", ") + type + " x" + std::to_string(count);
  }
  Throw(source + ": unsupported ONNX ops: " + list);
}

// The window attributes of Conv and the pools, checked before ONNX's shape inference, which
// divides by strides and dilations and would stop the process (SIGFPE) on a zero: strides,
// dilations, kernel_shape and group positive, pads non-negative.
void CheckWindowAttributes(const onnx::GraphProto& graph, const std::string& source) {
  static const std::set<std::string> kWindowOps = {"Conv", "MaxPool", "AveragePool"};
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!kWindowOps.count(node.op_type())) continue;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      const std::string& name = attr.name();
      const bool positive = name == "strides" || name == "dilations" || name == "kernel_shape" ||
                            name == "group";
      if (!positive && name != "pads") continue;
      std::vector<int64_t> values(attr.ints().begin(), attr.ints().end());
      if (attr.has_i()) values.push_back(attr.i());
      for (const int64_t v : values) {
        if (positive ? v > 0 : v >= 0) continue;
        Throw(source + ": " + NodeLabel(i, node) + ": attribute '" + name + "' holds " +
              std::to_string(v) + "; it must be " + (positive ? "positive" : "non-negative"));
      }
    }
  }
}

// The graph's one input that is not an initializer.
onnx::ValueInfoProto* FindDataInput(onnx::GraphProto* graph, const std::string& source) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : graph->initializer()) initializers.insert(t.name());
  std::vector<onnx::ValueInfoProto*> inputs;
  for (onnx::ValueInfoProto& input : *graph->mutable_input()) {
    if (!initializers.count(input.name())) inputs.push_back(&input);
  }
  if (inputs.size() != 1) {
    Throw(source + ": braid imports models with one input, this one has " +
          std::to_string(inputs.size()));
  }
  return inputs[0];
}

// Makes the input's shape static: `requested`, or the model's with symbolic dims set to 1.
std::vector<int64_t> FixInputShape(onnx::ValueInfoProto* input, const std::vector<int64_t>& requested,
                                   const std::string& source) {
  auto* type = input->mutable_type()->mutable_tensor_type();
  if (type->elem_type() != onnx::TensorProto::FLOAT) {
    Throw(source + ": input '" + input->name() + "' is not float32");
  }
  std::vector<int64_t> dims;
  if (!requested.empty()) {
    if (type->has_shape() && type->shape().dim_size() != static_cast<int>(requested.size())) {
      Throw(source + ": input shape " + DimsText(requested) + " has not the " +
            std::to_string(type->shape().dim_size()) + " dims of input '" + input->name() + "'");
    }
    dims = requested;
  } else {
    if (!type->has_shape()) Throw(source + ": input '" + input->name() + "' has no shape");
    for (const auto& dim : type->shape().dim()) {
      dims.push_back(dim.has_dim_value() && dim.dim_value() > 0 ? dim.dim_value() : 1);
    }
  }
  type->mutable_shape()->clear_dim();
  for (int64_t d : dims) type->mutable_shape()->add_dim()->set_dim_value(d);
  return dims;
}

void RecordStaticShape(const onnx::ValueInfoProto& value, ImportContext* ctx) {
  if (!value.type().has_tensor_type() || !value.type().tensor_type().has_shape()) return;
  std::vector<int64_t> dims;
  for (const auto& dim : value.type().tensor_type().shape().dim()) {
    if (!dim.has_dim_value()) return;
    if (dim.dim_value() < 0) {
      ctx->Fail("value '" + value.name() + "' declares dim " + std::to_string(dim.dim_value()));
    }
    dims.push_back(dim.dim_value());
  }
  ctx->SetShape(value.name(), std::move(dims));
}

void ConvertNodes(const onnx::GraphProto& graph, ImportContext* ctx) {
  for (int i = 0; i < graph.node_size(); ++i) {
    ctx->BeginNode(i, &graph.node(i));
    try {
      NodeConverters().at(graph.node(i).op_type())(ctx);
    } catch (const NodeError&) {
      throw;
    } catch (const Error& e) {  // a fold's or a constant's error, which names no node
      ctx->Fail(e.status().message(), e.status().code());
    } catch (const std::bad_alloc&) {
      ctx->Fail("out of memory converting it", StatusCode::kResourceExhausted);
    } catch (const std::exception& e) {  // a converter's bug, not the model's (fuzzers look for it)
      ctx->Fail(std::string("converting it threw: ") + e.what(), StatusCode::kInternal);
    }
  }
}

// Frees the memory of `tensor`'s elements (clear() alone would keep the capacity).
void ReleaseElements(onnx::TensorProto* tensor) {
  std::string().swap(*tensor->mutable_raw_data());
  google::protobuf::RepeatedField<float>().Swap(tensor->mutable_float_data());
  google::protobuf::RepeatedField<int32_t>().Swap(tensor->mutable_int32_data());
  google::protobuf::RepeatedField<int64_t>().Swap(tensor->mutable_int64_data());
  google::protobuf::RepeatedField<double>().Swap(tensor->mutable_double_data());
}

// Imports the parsed `proto`, consuming its initializers' elements as it copies them into
// constants, so a model's weights are held at most twice at once (constants and the init net).
void ImportModel(onnx::ModelProto& proto, const std::string& source,
                 const OnnxImportOptions& options, ModelFolder* model) {
  const int64_t opset = DefaultDomainOpset(proto, source);
  onnx::GraphProto* graph = proto.mutable_graph();
  CheckSupportedOps(*graph, source);
  CheckWindowAttributes(*graph, source);
  if (opset > kLoweredOpset) LowerToOpset17(&proto, opset, source);
  onnx::ValueInfoProto* input = FindDataInput(graph, source);
  *model = ModelFolder();
  model->inputs.push_back({input->name(), DType::kFloat32,
                           FixInputShape(input, options.input_shape, source)});
  const std::string& input_name = model->inputs[0].name;
  try {
    onnx::shape_inference::InferShapes(proto);
  } catch (const std::exception& e) {
    Throw(source + ": ONNX shape inference failed: " + e.what());
  }

  model->init_net.set_name(options.net_name + "_init");
  model->predict_net.set_name(options.net_name);
  model->predict_net.add_external_input(input_name);
  ImportContext ctx(source, opset, std::min(opset, kLoweredOpset), &model->init_net,
                    &model->predict_net);
  ctx.ReserveName(input_name);
  for (onnx::TensorProto& t : *graph->mutable_initializer()) {
    try {
      ctx.SetConstant(t.name(), ConstantFromOnnx(t));
    } catch (const Error& e) {
      Throw(source + ": initializer: " + e.status().message());
    }
    ReleaseElements(&t);  // shape inference, which reads them, ran above
  }
  for (const auto& v : graph->input()) RecordStaticShape(v, &ctx);
  for (const auto& v : graph->value_info()) RecordStaticShape(v, &ctx);
  for (const auto& v : graph->output()) RecordStaticShape(v, &ctx);
  for (const auto& v : graph->output()) ctx.MarkGraphOutput(v.name());
  for (const onnx::NodeProto& node : graph->node()) {
    for (const std::string& out : node.output()) ctx.ReserveName(out);
  }
  ConvertNodes(*graph, &ctx);

  std::set<std::string> written = {input_name};
  for (const OperatorDef& op : model->predict_net.op()) written.insert(op.output(0));
  for (const auto& v : graph->output()) {
    if (!written.count(v.name())) {
      Throw(source + ": graph output '" + v.name() +
            "' is a constant or a pad, which no braid op computes");
    }
    model->predict_net.add_external_output(v.name());
  }
}

}  // namespace

Status ImportOnnxBytes(const std::string& bytes, const std::string& source,
                       const OnnxImportOptions& options, ModelFolder* model) {
  return StatusFromCall([&] {
    onnx::ModelProto proto;
    if (!proto.ParseFromString(bytes)) Throw(source + ": not an ONNX model (it does not parse)");
    ImportModel(proto, source, options, model);
  });
}

// Parses straight from the file, so the file's bytes are never held beside the parsed model.
Status ImportOnnxFile(const std::string& path, const OnnxImportOptions& options,
                      ModelFolder* model) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::NotFound("cannot open ONNX model '" + path + "'");
  onnx::ModelProto proto;
  if (!proto.ParseFromIstream(&file)) {
    if (file.bad()) return Status::IoError("reading '" + path + "' failed");
    return Status::InvalidArgument(path + ": not an ONNX model (it does not parse)");
  }
  return StatusFromCall([&] {
    LoadExternalData(&proto, std::filesystem::path(path).parent_path().string(), path);
    ImportModel(proto, path, options, model);
  });
}

bool IsOnnxPath(const std::string& path) {
  const std::string suffix = ".onnx";
  return path.size() >= suffix.size() &&
         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace braid
