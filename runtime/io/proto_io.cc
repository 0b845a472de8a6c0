#include "runtime/io/proto_io.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "braid/status.h"
#include "runtime/io/atomic_file.h"

namespace braid {
namespace {

bool IsBinaryPath(const std::string& path) {
  auto ends_with = [&](const std::string& suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".pb") || ends_with(".bin");
}

class FirstErrorCollector final : public google::protobuf::io::ErrorCollector {
 public:
  explicit FirstErrorCollector(std::string source) : source_(std::move(source)) {}
  void AddError(int line, int column, const std::string& message) override {
    if (!first_.empty()) return;
    first_ = source_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  const std::string& first() const { return first_; }

 private:
  std::string source_;
  std::string first_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(Status::NotFound("cannot open '" + path + "'"));
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

}  // namespace

void ParseTextProto(const std::string& text, const std::string& source,
                    google::protobuf::Message* message) {
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors(source);
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, message)) {
    throw Error(Status::InvalidArgument(
        errors.first().empty() ? source + ": not a valid text " + message->GetTypeName() : errors.first()));
  }
}

void LoadProto(const std::string& path, google::protobuf::Message* message) {
  std::string content = ReadFile(path);
  if (!IsBinaryPath(path)) {
    ParseTextProto(content, path, message);
    return;
  }
  if (!message->ParseFromString(content)) {
    throw Error(Status::InvalidArgument("'" + path + "' is not a valid binary " +
                                        message->GetTypeName()));
  }
}

void SaveProto(const google::protobuf::Message& message, const std::string& path) {
  std::string content;
  const bool serialized = IsBinaryPath(path)
                              ? message.SerializeToString(&content)
                              : google::protobuf::TextFormat::PrintToString(message, &content);
  if (!serialized) {  // binary protobuf stops at 2 GiB
    throw Error(Status::InvalidArgument("cannot save '" + path + "': the " +
                                        message.GetTypeName() + " (" +
                                        std::to_string(message.ByteSizeLong()) +
                                        " bytes) cannot be serialized; protobuf files hold at "
                                        "most 2 GiB"));
  }
  const Status written = WriteFileAtomically(path, content);
  if (!written.ok()) throw Error(written);
}

NetDef LoadNetDef(const std::string& path) {
  NetDef net;
  LoadProto(path, &net);
  return net;
}

}  // namespace braid
