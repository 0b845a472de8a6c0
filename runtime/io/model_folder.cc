#include "runtime/io/model_folder.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "braid/status.h"
#include "runtime/core/tensor_proto_dtype.h"
#include "runtime/io/atomic_file.h"
#include "runtime/io/proto_io.h"

namespace braid {
namespace {

using Json = nlohmann::ordered_json;

// Reads the whole file, or returns NotFound/IoError naming it.
Status ReadTextFile(const std::string& path, std::string* text) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::NotFound("cannot open '" + path + "'");
  std::ostringstream content;
  content << file.rdbuf();
  if (!file) return Status::IoError("cannot read '" + path + "'");
  *text = content.str();
  return Status::OK();
}

// One entry of value_info.json, `name: [TYPE, [DIM, ...]]`, or an error naming what is wrong.
Status ParseEntry(const std::string& name, const Json& value, const std::string& source,
                  ValueInfo* info) {
  const auto expected = [&](const std::string& what) {
    return Status::InvalidArgument(source + ": input '" + name + "': expected " + what + ", got " +
                                   value.dump() +
                                   " (value_info.json is {\"NAME\": [1, [DIM, ...]]})");
  };
  if (!value.is_array() || value.size() != 2) return expected("[TYPE, [DIM, ...]]");
  if (!value[0].is_number_integer()) return expected("the element type, an integer");
  if (!value[1].is_array()) return expected("the shape, a list of dimensions");
  info->name = name;
  info->shape.clear();
  for (const Json& dim : value[1]) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0) return expected("dimensions >= 0");
    info->shape.push_back(dim.get<int64_t>());
  }
  const int64_t code = value[0].get<int64_t>();
  const std::optional<DType> dtype = code >= 0 && code <= INT32_MAX
                                         ? DTypeOfTensorProtoType(static_cast<int>(code))
                                         : std::nullopt;
  if (!dtype) {
    return Status::InvalidArgument(source + ": input '" + name + "' has element type " +
                                   std::to_string(code) + ", which braid lacks (" +
                                   kTensorProtoDTypes + ")");
  }
  info->dtype = *dtype;
  return Status::OK();
}

}  // namespace

const ValueInfo* ModelFolder::FindInput(const std::string& name) const {
  for (const ValueInfo& input : inputs) {
    if (input.name == name) return &input;
  }
  return nullptr;
}

Status ParseValueInfoJson(const std::string& text, const std::string& source,
                          std::vector<ValueInfo>* inputs) {
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return Status::InvalidArgument(source +
                                   ": not JSON (value_info.json is {\"NAME\": [1, [DIM, ...]]})");
  }
  if (!json.is_object() || json.empty()) {
    return Status::InvalidArgument(source + ": expected an object naming at least one input, got " +
                                   json.dump() +
                                   " (value_info.json is {\"NAME\": [1, [DIM, ...]]})");
  }
  inputs->clear();
  for (const auto& [name, value] : json.items()) {
    ValueInfo info;
    Status status = ParseEntry(name, value, source, &info);
    if (!status.ok()) return status;
    inputs->push_back(std::move(info));
  }
  return Status::OK();
}

Status LoadModelFolder(const std::string& dir, ModelFolder* model) {
  if (!std::filesystem::is_directory(dir)) {
    return Status::NotFound("model folder '" + dir + "' does not exist");
  }
  Status status = StatusFromCall([&] {
    model->init_net = LoadNetDef(dir + "/init_net.pb");
    model->predict_net = LoadNetDef(dir + "/predict_net.pb");
  });
  if (!status.ok()) return status;
  const std::string path = dir + "/value_info.json";
  std::string text;
  status = ReadTextFile(path, &text);
  if (status.ok()) status = ParseValueInfoJson(text, path, &model->inputs);
  return status;
}

std::string ValueInfoJson(const std::vector<ValueInfo>& inputs) {
  std::string json = "{";  // spaced as the zoo's files are
  for (size_t i = 0; i < inputs.size(); ++i) {
    json += (i ? ", " : "") + Json(inputs[i].name).dump() + ": [" +
            std::to_string(TensorProtoDataType(inputs[i].dtype)) + ", [";
    for (size_t d = 0; d < inputs[i].shape.size(); ++d) {
      json += (d ? ", " : "") + std::to_string(inputs[i].shape[d]);
    }
    json += "]]";
  }
  return json + "}\n";
}

Status WriteModelFolder(const std::string& dir, const ModelFolder& model) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return Status::IoError("cannot create '" + dir + "': " + error.message());
  const Status saved = StatusFromCall([&] {
    SaveProto(model.init_net, dir + "/init_net.pb");
    SaveProto(model.predict_net, dir + "/predict_net.pb");
  });
  if (!saved.ok()) return saved;
  return WriteFileAtomically(dir + "/value_info.json", ValueInfoJson(model.inputs));
}

}  // namespace braid
