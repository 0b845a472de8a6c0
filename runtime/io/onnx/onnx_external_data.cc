#include "runtime/io/onnx/onnx_external_data.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "braid/status.h"
#include "runtime/core/dims_text.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

struct ExternalRange {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: not given (ONNX: the data runs to the end of the file)
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
  const fs::path location(range.location);
  bool climbs = false;
  for (const auto& part : location) climbs = climbs || part == "..";
  if (range.location.empty() || location.is_absolute() || climbs) {
    Throw(Status::InvalidArgument(what + ": location '" + range.location +
                                  "' is not a relative path below the model's folder"));
  }
  return range;
}

// The size in bytes of one element of the ONNX data types ConstantFromOnnx reads; throws for
// any other type before a byte is read.
int64_t ElementBytes(const onnx::TensorProto& tensor, const std::string& what) {
  using T = onnx::TensorProto;
  switch (tensor.data_type()) {
    case T::FLOAT:
    case T::INT32:
      return 4;
    case T::DOUBLE:
    case T::INT64:
      return 8;
    case T::FLOAT16:
      return 2;
    case T::INT8:
    case T::UINT8:
    case T::BOOL:
      return 1;
    default:
      Throw(Status::InvalidArgument(what + ": ONNX data type " +
                                    std::to_string(tensor.data_type()) +
                                    " is not one braid reads (float, float16, double, int8, "
                                    "uint8, int32, int64, bool)"));
  }
}

// dims' element count times the element size, refusing negative dims and overflow.
int64_t ExpectedBytes(const onnx::TensorProto& tensor, const std::string& what) {
  const int64_t element = ElementBytes(tensor, what);
  const std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  int64_t bytes = element;
  for (int64_t d : dims) {
    if (d < 0 || (d != 0 && bytes > std::numeric_limits<int64_t>::max() / d)) {
      Throw(Status::InvalidArgument(what + ": dims " + DimsText(dims) +
                                    " are negative or their byte count overflows int64"));
    }
    bytes *= d;
  }
  return bytes;
}

// Refuses a location that leaves `folder` through a symbolic link or does not name a regular
// file: each component below the folder must be a plain folder or, the last, a regular file
// (symlink_status, which does not follow links), and the canonical file must lie under the
// canonical folder.
void CheckInsideFolder(const fs::path& folder, const ExternalRange& range, const fs::path& path,
                       const std::string& what) {
  const auto refuse = [&](const std::string& why) {
    Throw(Status::InvalidArgument(what + ": location '" + range.location + "' " + why));
  };
  fs::path walked = folder;
  const fs::path location(range.location);
  const auto last = std::prev(location.end());
  for (auto part = location.begin(); part != location.end(); ++part) {
    if (part->empty() || *part == ".") continue;
    walked /= *part;
    std::error_code error;
    const fs::file_status status = fs::symlink_status(walked, error);
    if (status.type() == fs::file_type::not_found) {
      Throw(Status::NotFound(what + ": cannot open '" + path.string() + "'"));
    }
    if (error) Throw(Status::IoError(what + ": cannot inspect '" + walked.string() + "'"));
    if (fs::is_symlink(status)) {
      refuse("passes through the symbolic link '" + walked.string() +
             "', which braid does not follow");
    }
    if (part == last ? !fs::is_regular_file(status) : !fs::is_directory(status)) {
      refuse("names '" + walked.string() + "', which is not a " +
             (part == last ? "regular file" : "folder"));
    }
  }
  std::error_code error;
  const fs::path root = fs::canonical(folder, error);
  const fs::path file = error ? fs::path() : fs::canonical(path, error);
  if (error) Throw(Status::IoError(what + ": cannot resolve '" + path.string() + "'"));
  const auto [root_end, file_at] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  if (root_end != root.end() || file_at == file.end()) {
    refuse("resolves to '" + file.string() + "', outside the model's folder '" + root.string() +
           "'");
  }
}

// Exactly `expected` bytes at `range.offset` of `path`: `length`, when given, must equal them;
// without it ONNX's data runs to the end of the file, so the rest of the file must hold exactly
// them. Never allocates more than `expected`.
std::string ReadBytes(const fs::path& path, const ExternalRange& range, int64_t expected,
                      const std::string& what) {
  const std::string name = path.string();
  if (range.length >= 0 && range.length != expected) {
    Throw(Status::InvalidArgument(what + ": length " + std::to_string(range.length) +
                                  " differs from the " + std::to_string(expected) +
                                  " bytes its dims and data type need"));
  }
  std::error_code error;
  const uintmax_t size = fs::file_size(path, error);
  if (error) Throw(Status::NotFound(what + ": cannot open '" + name + "'"));
  if (size > static_cast<uintmax_t>(std::numeric_limits<int64_t>::max())) {
    Throw(Status::InvalidArgument(what + ": '" + name + "' is too large"));
  }
  const int64_t file_size = static_cast<int64_t>(size);
  if (range.offset > file_size || expected > file_size - range.offset) {
    Throw(Status::InvalidArgument(what + ": bytes [" + std::to_string(range.offset) + ", +" +
                                  std::to_string(expected) + ") lie outside '" + name + "' of " +
                                  std::to_string(file_size) + " bytes"));
  }
  if (range.length < 0 && file_size - range.offset != expected) {
    Throw(Status::InvalidArgument(
        what + ": without a length the data runs from offset " + std::to_string(range.offset) +
        " to the end of '" + name + "', " + std::to_string(file_size - range.offset) +
        " bytes, but its dims and data type need " + std::to_string(expected)));
  }
  std::ifstream file(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(expected), '\0');
  if (!file || !file.seekg(range.offset) || !file.read(bytes.data(), expected)) {
    Throw(Status::IoError(what + ": reading '" + name + "' failed"));
  }
  return bytes;
}

void LoadTensor(onnx::TensorProto* t, const std::string& folder, const std::string& what) {
  const ExternalRange range = ReadRange(*t, what);
  const int64_t expected = ExpectedBytes(*t, what);
  const fs::path root = folder.empty() ? fs::path(".") : fs::path(folder);
  const fs::path path = fs::path(folder) / range.location;
  CheckInsideFolder(root, range, path, what);
  *t->mutable_raw_data() = ReadBytes(path, range, expected, what);
  t->clear_external_data();
  t->set_data_location(onnx::TensorProto::DEFAULT);
}

}  // namespace

void LoadExternalData(onnx::ModelProto* model, const std::string& folder,
                      const std::string& source) {
  onnx::GraphProto* graph = model->mutable_graph();
  for (onnx::TensorProto& t : *graph->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    LoadTensor(&t, folder, source + ": initializer '" + t.name() + "'");
  }
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    if (node.op_type() != "Constant") continue;
    for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.name() != "value" || !attr.has_t()) continue;
      onnx::TensorProto* t = attr.mutable_t();
      if (t->data_location() != onnx::TensorProto::EXTERNAL) continue;
      LoadTensor(t, folder, source + ": Constant node '" + node.name() + "' value '" +
                                t->name() + "'");
    }
  }
}

}  // namespace braid
