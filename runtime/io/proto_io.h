// Reading and writing protobuf files (nets, tensors, plans) in text or binary form.
//
// The form is chosen by the file name: ".pb" and ".bin" are binary, anything else (".pbtxt",
// ".prototxt", ".txt") is text. Errors name the file; text-format errors give line and column.
//
//   NetDef net = LoadNetDef("examples/mlp.pbtxt");
//   // throws braid::Error: "examples/mlp.pbtxt:12:7: Expected identifier, got: }"
//
// Thread safety: each call reads or writes its own file and proto; writes go through
// runtime/io/atomic_file.h, so concurrent writers of one path never mix their bytes.
#ifndef BRAID_RUNTIME_IO_PROTO_IO_H_
#define BRAID_RUNTIME_IO_PROTO_IO_H_

#include <string>

#include <google/protobuf/message.h>

#include "proto/braid.pb.h"

namespace braid {

// Parses text format; `source` names the text in errors (a path, or "<string>").
void ParseTextProto(const std::string& text, const std::string& source,
                    google::protobuf::Message* message);
void LoadProto(const std::string& path, google::protobuf::Message* message);
// Writes atomically (runtime/io/atomic_file.h): the old file or all of the new one, never a part.
void SaveProto(const google::protobuf::Message& message, const std::string& path);

NetDef LoadNetDef(const std::string& path);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_PROTO_IO_H_
