#include "runtime/model_folder.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/proto_io.h"
#include "runtime/status.h"

namespace braid {
namespace {

// A JSON string literal.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Caffe2's TensorProto.DataType codes for the dtypes braid has.
struct DataTypeCode {
  int64_t code;
  DType dtype;
};
constexpr DataTypeCode kDataTypes[] = {
    {1, DType::kFloat32}, {2, DType::kInt32},  {5, DType::kBool},
    {6, DType::kUInt8},   {10, DType::kInt64}, {13, DType::kFloat64},
};

// A cursor over value_info.json's text: {"NAME": [TYPE, [DIM, ...]]}.
class ValueInfoParser {
 public:
  ValueInfoParser(const std::string& text, const std::string& source)
      : text_(text), source_(source) {}

  Status Error(const std::string& expected) const {
    return Status::InvalidArgument(source_ + ": expected " + expected + " at offset " +
                                   std::to_string(pos_) +
                                   " (value_info.json is {\"NAME\": [1, [DIM, ...]]})");
  }
  bool Take(char c) {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool AtEnd() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return pos_ == text_.size();
  }
  // A JSON string; \u escapes are kept only for ASCII.
  bool TakeString(std::string* value) {
    if (!Take('"')) return false;
    value->clear();
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) return false;
        c = text_[pos_++];
        if (c == 'u') {
          if (pos_ + 4 > text_.size()) return false;
          const long code = std::strtol(text_.substr(pos_, 4).c_str(), nullptr, 16);
          if (code > 0x7f) return false;
          c = static_cast<char>(code);
          pos_ += 4;
        } else if (c == 'n') {
          c = '\n';
        } else if (c == 't') {
          c = '\t';
        } else if (c != '"' && c != '\\' && c != '/') {
          return false;
        }
      }
      *value += c;
    }
    return Take('"');
  }
  bool TakeInteger(int64_t* value) {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    const char* start = text_.c_str() + pos_;
    char* end = nullptr;
    const long long parsed = std::strtoll(start, &end, 10);
    if (end == start || *end == '.' || *end == 'e' || *end == 'E') return false;
    pos_ += end - start;
    *value = parsed;
    return true;
  }

 private:
  const std::string& text_;
  const std::string& source_;
  size_t pos_ = 0;
};

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

}  // namespace

Status ParseValueInfoJson(const std::string& text, const std::string& source, ModelFolder* model) {
  ValueInfoParser parser(text, source);
  int64_t code = 0;
  if (!parser.Take('{')) return parser.Error("'{'");
  if (!parser.TakeString(&model->input_name)) return parser.Error("the input's name, a string");
  if (!parser.Take(':') || !parser.Take('[')) return parser.Error("': ['");
  if (!parser.TakeInteger(&code)) return parser.Error("the element type, an integer");
  if (!parser.Take(',') || !parser.Take('[')) return parser.Error("', [' before the shape");
  model->input_shape.clear();
  if (!parser.Take(']')) {
    do {
      int64_t dim = 0;
      if (!parser.TakeInteger(&dim) || dim < 0) return parser.Error("a dimension >= 0");
      model->input_shape.push_back(dim);
    } while (parser.Take(','));
    if (!parser.Take(']')) return parser.Error("']' after the shape");
  }
  if (!parser.Take(']')) return parser.Error("']' after the shape");
  if (parser.Take(',')) {
    return Status::InvalidArgument(source + ": braid reads models with one input; '" +
                                   model->input_name + "' is followed by another");
  }
  if (!parser.Take('}') || !parser.AtEnd()) return parser.Error("'}' and the end of the text");
  for (const DataTypeCode& known : kDataTypes) {
    if (known.code == code) {
      model->input_dtype = known.dtype;
      return Status::OK();
    }
  }
  return Status::InvalidArgument(source + ": input '" + model->input_name + "' has element type " +
                                 std::to_string(code) +
                                 ", which braid lacks (1 FLOAT, 2 INT32, 5 BOOL, 6 UINT8, 10 "
                                 "INT64, 13 DOUBLE)");
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
  if (status.ok()) status = ParseValueInfoJson(text, path, model);
  return status;
}

std::string ValueInfoJson(const std::string& input_name, const std::vector<int64_t>& input_shape) {
  std::string json = "{" + Quoted(input_name) + ": [1, [";
  for (size_t i = 0; i < input_shape.size(); ++i) {
    json += (i ? ", " : "") + std::to_string(input_shape[i]);
  }
  return json + "]]}\n";
}

void WriteModelFolder(const std::string& dir, const NetDef& init_net, const NetDef& predict_net,
                      const std::string& input_name, const std::vector<int64_t>& input_shape) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw Error(Status::IoError("cannot create '" + dir + "': " + error.message()));
  SaveProto(init_net, dir + "/init_net.pb");
  SaveProto(predict_net, dir + "/predict_net.pb");
  const std::string path = dir + "/value_info.json";
  std::ofstream file(path);
  file << ValueInfoJson(input_name, input_shape);
  file.close();
  if (!file) throw Error(Status::IoError("cannot write '" + path + "'"));
}

}  // namespace braid
