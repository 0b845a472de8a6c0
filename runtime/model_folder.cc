#include "runtime/model_folder.h"

#include <filesystem>
#include <fstream>

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

}  // namespace

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
