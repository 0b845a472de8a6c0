#include "runtime/io/onnx/onnx_external_data.h"

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "braid/status.h"

namespace braid {
namespace {

struct ExternalRange {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

[[noreturn]] void Throw(const Status& status) { throw Error(status); }

int64_t ParseCount(const std::string& text, const std::string& what) {
  size_t used = 0;
  int64_t value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || value < 0) {
    Throw(Status::InvalidArgument(what + " '" + text + "' is not a non-negative integer"));
  }
  return value;
}

ExternalRange ReadRange(const onnx::TensorProto& tensor, const std::string& what) {
  ExternalRange range;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") range.location = entry.value();
    if (entry.key() == "offset") range.offset = ParseCount(entry.value(), what + ": offset");
    if (entry.key() == "length") range.length = ParseCount(entry.value(), what + ": length");
  }
  const std::filesystem::path location(range.location);
  bool climbs = false;
  for (const auto& part : location) climbs = climbs || part == "..";
  if (range.location.empty() || location.is_absolute() || climbs) {
    Throw(Status::InvalidArgument(what + ": location '" + range.location +
                                  "' is not a relative path below the model's folder"));
  }
  return range;
}

// The bytes [offset, offset + length) of `path`.
std::string ReadBytes(const std::string& path, const ExternalRange& range,
                      const std::string& what) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) Throw(Status::NotFound(what + ": cannot open '" + path + "'"));
  const int64_t file_size = static_cast<int64_t>(size);
  const int64_t length = range.length < 0 ? file_size - range.offset : range.length;
  if (range.offset > file_size || length < 0 || length > file_size - range.offset) {
    Throw(Status::InvalidArgument(what + ": bytes [" + std::to_string(range.offset) + ", +" +
                                  std::to_string(length) + ") lie outside '" + path + "' of " +
                                  std::to_string(file_size) + " bytes"));
  }
  std::ifstream file(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(length), '\0');
  if (!file || !file.seekg(range.offset) || !file.read(bytes.data(), length)) {
    Throw(Status::IoError(what + ": reading '" + path + "' failed"));
  }
  return bytes;
}

}  // namespace

void LoadExternalData(onnx::ModelProto* model, const std::string& folder,
                      const std::string& source) {
  for (onnx::TensorProto& t : *model->mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    const std::string what = source + ": initializer '" + t.name() + "'";
    const ExternalRange range = ReadRange(t, what);
    const std::string path = (std::filesystem::path(folder) / range.location).string();
    *t.mutable_raw_data() = ReadBytes(path, range, what);
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
}

}  // namespace braid
