#include "runtime/io/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include "braid/status.h"
#include "runtime/core/dims_text.h"
#include "runtime/core/element_count.h"
#include "runtime/io/proto_io.h"

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

// Checks the proto's dims against its values before anything is allocated, then copies them.
template <typename T, typename Field>
void CopyValues(const TensorProto& proto, const Field& field, DType dtype, Tensor* tensor) {
  const std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  int64_t count = 0;
  try {
    count = ElementCount(dims, dtype);
  } catch (const Error& e) {
    ThrowInvalid("tensor '" + proto.name() + "': " + e.status().message());
  }
  if (field.size() != count) {
    ThrowInvalid("tensor '" + proto.name() + "' " + ShapeOfProto(proto) + " holds " +
                 std::to_string(field.size()) + " values, not " + std::to_string(count));
  }
  tensor->Resize(dtype, dims);
  T* out = tensor->mutable_data<T>();
  if constexpr (std::is_same_v<T, Float16>) {
    for (int i = 0; i < field.size(); ++i) {
      const int32_t bits = field.Get(i);
      if (bits < 0 || bits > 0xffff) {
        ThrowInvalid("tensor '" + proto.name() + "' (FLOAT16) holds " + std::to_string(bits) +
                     " at " + std::to_string(i) + ", not the 16 bits of a half");
      }
      out[i] = Float16::FromBits(static_cast<uint16_t>(bits));
    }
  } else {
    std::copy(field.begin(), field.end(), out);
  }
}

// A FLOAT16 proto whose byte_data holds the halves' little-endian bytes.
void CopyHalfBytes(const TensorProto& proto, Tensor* tensor) {
  const std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  int64_t count = 0;
  try {
    count = ElementCount(dims, DType::kFloat16);
  } catch (const Error& e) {
    ThrowInvalid("tensor '" + proto.name() + "': " + e.status().message());
  }
  if (static_cast<int64_t>(proto.byte_data().size()) != 2 * count) {
    ThrowInvalid("tensor '" + proto.name() + "' " + ShapeOfProto(proto) + " (FLOAT16) holds " +
                 std::to_string(proto.byte_data().size()) + " bytes, not " +
                 std::to_string(2 * count));
  }
  tensor->Resize(DType::kFloat16, dims);
  if (count > 0) {
    std::memcpy(tensor->raw_mutable_data(DType::kFloat16), proto.byte_data().data(),
                proto.byte_data().size());
  }
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
  switch (proto.data_type()) {
    case TensorProto::FLOAT:
      return CopyValues<float>(proto, proto.float_data(), DType::kFloat32, tensor);
    case TensorProto::DOUBLE:
      return CopyValues<double>(proto, proto.double_data(), DType::kFloat64, tensor);
    case TensorProto::INT32:
      return CopyValues<int32_t>(proto, proto.int32_data(), DType::kInt32, tensor);
    case TensorProto::INT64:
      return CopyValues<int64_t>(proto, proto.int64_data(), DType::kInt64, tensor);
    case TensorProto::UINT8:
      return CopyValues<uint8_t>(proto, proto.int32_data(), DType::kUInt8, tensor);
    case TensorProto::BOOL:
      return CopyValues<bool>(proto, proto.int32_data(), DType::kBool, tensor);
    case TensorProto::FLOAT16:
      if (proto.has_byte_data()) return CopyHalfBytes(proto, tensor);  // Caffe2's other form
      return CopyValues<Float16>(proto, proto.int32_data(), DType::kFloat16, tensor);
    default:
      ThrowInvalid("tensor '" + proto.name() + "' has unsupported data_type " +
                   std::to_string(proto.data_type()));
  }
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
