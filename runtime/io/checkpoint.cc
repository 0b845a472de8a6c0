#include "runtime/io/checkpoint.h"

#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include "braid/status.h"
#include "runtime/core/dims_text.h"
#include "runtime/io/proto_io.h"
#include "runtime/io/tensor_protos_record.h"

namespace braid {
namespace {

constexpr char kModelEntry[] = "__model__";

[[noreturn]] void ThrowInvalid(const std::string& message) {
  throw Error(Status::InvalidArgument(message));
}

template <typename T, typename Field>
void AppendValues(const std::string& name, const Tensor& tensor, Field* field) {
  if (tensor.numel() > std::numeric_limits<int>::max()) {  // a protobuf field's limit
    ThrowInvalid("tensor '" + name + "' " + tensor.ShapeString() + " has " +
                 std::to_string(tensor.numel()) + " elements; a checkpoint tensor holds at most " +
                 std::to_string(std::numeric_limits<int>::max()));
  }
  const T* data = tensor.data<T>();
  field->Reserve(static_cast<int>(tensor.numel()));
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    if constexpr (std::is_same_v<T, Float16>) {
      field->Add(data[i].bits());  // Caffe2's float16: each element's bits in int32_data
    } else {
      field->Add(data[i]);
    }
  }
}

std::string ShapeOfProto(const TensorProto& proto) {
  return DimsText({proto.dims().begin(), proto.dims().end()});
}

}  // namespace

TensorProto ToTensorProto(const std::string& name, const Tensor& on_device) {
  Tensor host;  // a copy when the tensor is on a device that is not the host
  if (!on_device.device().is_host()) host.CopyFrom(on_device);
  const Tensor& tensor = on_device.device().is_host() ? on_device : host;
  TensorProto proto;
  proto.set_name(name);
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  switch (tensor.dtype()) {
    case DType::kFloat32:
      proto.set_data_type(TensorProto::FLOAT);
      AppendValues<float>(name, tensor, proto.mutable_float_data());
      break;
    case DType::kFloat64:
      proto.set_data_type(TensorProto::DOUBLE);
      AppendValues<double>(name, tensor, proto.mutable_double_data());
      break;
    case DType::kInt32:
      proto.set_data_type(TensorProto::INT32);
      AppendValues<int32_t>(name, tensor, proto.mutable_int32_data());
      break;
    case DType::kInt64:
      proto.set_data_type(TensorProto::INT64);
      AppendValues<int64_t>(name, tensor, proto.mutable_int64_data());
      break;
    case DType::kUInt8:
      proto.set_data_type(TensorProto::UINT8);
      AppendValues<uint8_t>(name, tensor, proto.mutable_int32_data());
      break;
    case DType::kBool:
      proto.set_data_type(TensorProto::BOOL);
      AppendValues<bool>(name, tensor, proto.mutable_int32_data());
      break;
    case DType::kFloat16:
      proto.set_data_type(TensorProto::FLOAT16);
      AppendValues<Float16>(name, tensor, proto.mutable_int32_data());
      break;
  }
  return proto;
}

void FromTensorProto(const TensorProto& proto, Tensor* tensor) {
  const std::string where = "tensor '" + proto.name() + "'";
  const RecordTensor read = RecordTensorOf(proto, where);
  CopyRecordValues(
      proto, read,
      [&] {  // the values are checked: only now does the tensor change
        tensor->Resize(read.dtype, read.dims);
        return static_cast<uint8_t*>(tensor->raw_mutable_data(read.dtype));
      },
      where);
}

void SaveCheckpoint(const Workspace& ws, const std::vector<std::string>& blobs,
                    const std::string& model, const std::string& path) {
  TensorProtos protos;
  TensorProto* model_entry = protos.add_protos();
  model_entry->set_name(kModelEntry);
  model_entry->set_data_type(TensorProto::STRING);
  model_entry->add_string_data(model);
  for (const std::string& name : blobs) {
    const Tensor* tensor = ws.GetBlob(name);
    if (tensor == nullptr || !tensor->has_storage()) {
      throw Error(Status::NotFound("checkpoint '" + path + "': blob '" + name +
                                   "' does not exist or was never written"));
    }
    *protos.add_protos() = ToTensorProto(name, *tensor);
  }
  SaveProto(protos, path);
}

void LoadCheckpoint(const std::string& path, const std::vector<std::string>& blobs,
                    const std::string& model, Workspace* ws) {
  TensorProtos protos;
  LoadProto(path, &protos);
  const std::string where = "checkpoint '" + path + "': ";
  std::map<std::string, const TensorProto*> by_name;
  for (const TensorProto& proto : protos.protos()) by_name[proto.name()] = &proto;
  auto model_entry = by_name.find(kModelEntry);
  if (model_entry == by_name.end() || model_entry->second->string_data_size() != 1 ||
      model_entry->second->string_data(0) != model) {
    const std::string written =
        model_entry == by_name.end() || model_entry->second->string_data_size() != 1
            ? "an unknown model"
            : "model '" + model_entry->second->string_data(0) + "'";
    ThrowInvalid(where + "was written for " + written + ", not '" + model + "'");
  }
  by_name.erase(model_entry);
  // Every tensor is read and checked before any blob changes: a bad checkpoint leaves the
  // workspace as it was.
  std::vector<std::pair<Tensor*, Tensor>> replacements;
  replacements.reserve(blobs.size());
  for (const std::string& name : blobs) {
    auto it = by_name.find(name);
    if (it == by_name.end()) ThrowInvalid(where + "has no tensor '" + name + "'");
    Tensor* tensor = ws->GetBlob(name);
    if (tensor == nullptr) ThrowInvalid(where + "blob '" + name + "' is not in the workspace");
    Tensor loaded;
    try {
      FromTensorProto(*it->second, &loaded);
    } catch (const Error& e) {
      ThrowInvalid(where + e.status().message());
    }
    if (tensor->has_storage() &&
        (loaded.dtype() != tensor->dtype() || loaded.shape() != tensor->shape())) {
      ThrowInvalid(where + "tensor '" + name + "' is " + loaded.ShapeString() +
                   " but the model's blob is " + tensor->ShapeString());
    }
    replacements.emplace_back(tensor, std::move(loaded));
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    ThrowInvalid(where + "holds tensor '" + by_name.begin()->first + "' " +
                 ShapeOfProto(*by_name.begin()->second) + " that the model does not have");
  }
  for (auto& [tensor, loaded] : replacements) tensor->CopyFrom(loaded);  // onto the blob's device
}

}  // namespace braid
