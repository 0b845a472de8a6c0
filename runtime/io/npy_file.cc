#include "runtime/io/npy_file.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "braid/model_io.h"
#include "runtime/io/atomic_file.h"

namespace braid {
namespace {

static_assert(std::endian::native == std::endian::little,
              "braid reads and writes .npy elements as they lie in memory: little endian");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct DescrName {
  const char* descr;
  DType dtype;
};
constexpr DescrName kDescrs[] = {
    {"<f4", DType::kFloat32}, {"<f8", DType::kFloat64}, {"<i4", DType::kInt32},
    {"<i8", DType::kInt64},   {"|u1", DType::kUInt8},   {"|b1", DType::kBool},
    {"<f2", DType::kFloat16},
};

// A cursor over the header's dict literal; every failure names the source and the header.
class HeaderParser {
 public:
  HeaderParser(const std::string& header, const std::string& source)
      : text_(header), source_(source) {}

  Status Error(const std::string& what) const {
    return Status::InvalidArgument(source_ + ": .npy header " + what + " (header: " + text_ + ")");
  }
  void SkipSpaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  bool Take(char c) {
    SkipSpaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool TakeWord(const char* word) {
    SkipSpaces();
    if (text_.compare(pos_, std::strlen(word), word) != 0) return false;
    pos_ += std::strlen(word);
    return true;
  }
  // A quoted string ('...' or "...") without escapes.
  bool TakeString(std::string* value) {
    SkipSpaces();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return false;
    const size_t end = text_.find(text_[pos_], pos_ + 1);
    if (end == std::string::npos) return false;
    *value = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return true;
  }
  // "(1, 3, 224, 224)", "(5,)" or "()".
  bool TakeShape(std::vector<int64_t>* shape) {
    if (!Take('(')) return false;
    shape->clear();
    while (!Take(')')) {
      SkipSpaces();
      size_t used = 0;
      long long dim = -1;
      try {
        dim = std::stoll(text_.substr(pos_), &used);
      } catch (const std::exception&) {
        return false;
      }
      if (dim < 0) return false;
      shape->push_back(dim);
      pos_ += used;
      if (Take(',')) continue;
      SkipSpaces();
      if (pos_ >= text_.size() || text_[pos_] != ')') return false;
    }
    return true;
  }

 private:
  const std::string& text_;
  const std::string& source_;
  size_t pos_ = 0;
};

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

Status ParseHeader(const std::string& header, const std::string& source, NpyHeader* out) {
  HeaderParser parser(header, source);
  bool has_descr = false, has_order = false, has_shape = false;
  if (!parser.Take('{')) return parser.Error("is not a dict literal");
  while (!parser.Take('}')) {
    std::string key;
    if (!parser.TakeString(&key) || !parser.Take(':')) return parser.Error("has a malformed key");
    if (key == "descr") {
      has_descr = parser.TakeString(&out->descr);
      if (!has_descr) return parser.Error("has a malformed 'descr'");
    } else if (key == "fortran_order") {
      has_order = true;
      if (parser.TakeWord("True")) {
        out->fortran_order = true;
      } else if (!parser.TakeWord("False")) {
        return parser.Error("has a malformed 'fortran_order'");
      }
    } else if (key == "shape") {
      has_shape = parser.TakeShape(&out->shape);
      if (!has_shape) return parser.Error("has a malformed 'shape'");
    } else {
      return parser.Error("has an unknown key '" + key + "'");
    }
    if (!parser.Take(',')) {
      if (!parser.Take('}')) return parser.Error("is not a dict literal");
      break;
    }
  }
  if (!has_descr || !has_order || !has_shape) {
    return parser.Error("lacks one of 'descr', 'fortran_order', 'shape'");
  }
  return Status::OK();
}

uint32_t LittleEndian(const std::string& bytes, size_t offset, size_t width) {
  uint32_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

// The header text after the magic, version and length; or an error.
Status HeaderText(const std::string& bytes, const std::string& source, std::string* header,
                  size_t* data_offset) {
  if (bytes.size() < kMagicSize + 4 || bytes.compare(0, kMagicSize, kMagic) != 0) {
    return Status::InvalidArgument(source + ": not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(bytes[kMagicSize]);
  if (major < 1 || major > 3) {
    return Status::InvalidArgument(source + ": .npy version " + std::to_string(major) +
                                   ".x is not supported (1.0, 2.0 and 3.0 are)");
  }
  const size_t width = major == 1 ? 2 : 4;
  if (bytes.size() < kMagicSize + 2 + width) {
    return Status::InvalidArgument(source + ": .npy file truncated in its header length");
  }
  const size_t length = LittleEndian(bytes, kMagicSize + 2, width);
  const size_t start = kMagicSize + 2 + width;
  if (bytes.size() < start + length) {
    return Status::InvalidArgument(source + ": .npy file truncated in its header");
  }
  *header = bytes.substr(start, length);
  *data_offset = start + length;
  return Status::OK();
}

Status DTypeOfDescr(const NpyHeader& header, const std::string& source, DType* dtype) {
  for (const DescrName& known : kDescrs) {
    if (header.descr == known.descr) {
      *dtype = known.dtype;
      return Status::OK();
    }
  }
  return Status::InvalidArgument(
      source + ": .npy dtype '" + header.descr +
      "' is not supported (little-endian float32 '<f4', float64 "
      "'<f8', float16 '<f2', int32 '<i4', int64 '<i8', uint8 '|u1' and bool '|b1' are)");
}

const char* DescrOf(DType dtype) {
  for (const DescrName& known : kDescrs) {
    if (known.dtype == dtype) return known.descr;
  }
  return nullptr;
}

std::string ShapeLiteral(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

Status ParseNpy(const std::string& bytes, const std::string& source, Tensor* tensor) {
  std::string header_text;
  size_t data_offset = 0;
  Status status = HeaderText(bytes, source, &header_text, &data_offset);
  NpyHeader header;
  if (status.ok()) status = ParseHeader(header_text, source, &header);
  if (!status.ok()) return status;
  if (header.fortran_order) {
    return Status::InvalidArgument(source +
                                   ": .npy array is in Fortran order; braid reads C order "
                                   "(save numpy.ascontiguousarray(a))");
  }
  DType dtype = DType::kFloat32;
  status = DTypeOfDescr(header, source, &dtype);
  if (!status.ok()) return status;
  return StatusFromCall([&] {
    *tensor = Tensor();
    tensor->Resize(dtype, header.shape);  // throws for shapes whose size overflows
    const size_t expected = tensor->nbytes();
    if (bytes.size() - data_offset != expected) {
      throw Error(Status::InvalidArgument(
          source + ": .npy data holds " + std::to_string(bytes.size() - data_offset) +
          " bytes, but " + tensor->ShapeString() + " needs " + std::to_string(expected)));
    }
    void* data = tensor->raw_mutable_data(dtype);
    if (expected > 0) std::memcpy(data, bytes.data() + data_offset, expected);
  });
}

Status ReadNpyFile(const std::string& path, Tensor* tensor) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::NotFound("cannot open '" + path + "'");
  std::ostringstream content;
  content << file.rdbuf();
  if (!file) return Status::IoError("cannot read '" + path + "'");
  return ParseNpy(content.str(), path, tensor);
}

Status NpyBytes(const Tensor& tensor, std::string* bytes) {
  const char* descr = DescrOf(tensor.dtype());
  if (descr == nullptr) {
    return Status::InvalidArgument(std::string(".npy: no dtype for ") + DTypeName(tensor.dtype()));
  }
  if (!tensor.device().is_host()) {
    return Status::InvalidArgument(".npy: tensor " + tensor.ShapeString() +
                                   " is not on the host (copy it there first)");
  }
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + ShapeLiteral(tensor.shape()) +
                       ", }";
  const size_t version = header.size() + 1 + kMagicSize + 4 > 65535 ? 2 : 1;
  const size_t prefix = kMagicSize + 2 + (version == 1 ? 2 : 4);
  const size_t padded = (prefix + header.size() + 1 + 63) / 64 * 64;  // data 64-byte aligned
  header.append(padded - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(version);
  out += '\0';
  const size_t length = header.size();
  for (size_t i = 0; i < (version == 1 ? 2u : 4u); ++i) out += static_cast<char>(length >> (8 * i));
  out += header;
  return StatusFromCall([&] {
    if (tensor.numel() > 0) {
      out.append(static_cast<const char*>(tensor.raw_data()), tensor.nbytes());
    }
    *bytes = std::move(out);
  });
}

Status WriteNpyFile(const std::string& path, const Tensor& tensor) {
  std::string bytes;
  Status status = NpyBytes(tensor, &bytes);
  if (!status.ok()) return Status(status.code(), path + ": " + status.message());
  return WriteFileAtomically(path, bytes);
}

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Status ReadNpyFile(const std::string& path, NpyArray* array) {
  Tensor tensor;
  const Status status = ReadNpyFile(path, &tensor);
  if (!status.ok()) return status;
  const auto* bytes = static_cast<const uint8_t*>(tensor.raw_data());
  *array = NpyArray{tensor.dtype(), tensor.shape(), {bytes, bytes + tensor.nbytes()}};
  return Status::OK();
}

Status WriteNpyFile(const std::string& path, const NpyArray& array) {
  Tensor tensor;
  Status status = StatusFromCall([&] { tensor.Resize(array.dtype, array.shape); });
  if (!status.ok()) return status;
  if (tensor.nbytes() != array.bytes.size()) {
    return Status::InvalidArgument("'" + path + "': an array of " + DTypeName(array.dtype) + " " +
                                   tensor.ShapeString() + " holds " +
                                   std::to_string(tensor.nbytes()) + " bytes, not " +
                                   std::to_string(array.bytes.size()));
  }
  std::copy(array.bytes.begin(), array.bytes.end(),
            static_cast<uint8_t*>(tensor.raw_mutable_data(array.dtype)));
  return WriteNpyFile(path, tensor);
}

}  // namespace braid
