#include "ops/data/db_reader_blob.h"

#include <cstring>

#include "braid/status.h"
#include "runtime/core/argument.h"

namespace braid {

void WriteDbReaderBlob(const OperatorDef& create_db, Tensor* blob) {
  OperatorDef args;
  for (const Argument& arg : create_db.arg()) {
    for (const char* name : kDbReaderArgs) {
      if (arg.name() == name) *args.add_arg() = arg;
    }
  }
  const std::string bytes = args.SerializeAsString();
  blob->Resize(DType::kUInt8, {static_cast<int64_t>(bytes.size())});
  if (!bytes.empty()) std::memcpy(blob->mutable_data<uint8_t>(), bytes.data(), bytes.size());
}

OperatorDef ReadDbReaderBlob(const Tensor& blob, const std::string& blob_name) {
  OperatorDef args;
  if (!blob.has_storage() || blob.dtype() != DType::kUInt8 || blob.shape().size() != 1 ||
      !args.ParseFromArray(blob.data<uint8_t>(), static_cast<int>(blob.numel()))) {
    throw Error(Status::InvalidArgument(
        "input '" + blob_name + "' " + (blob.has_storage() ? blob.ShapeString() : "(unwritten)") +
        " is not a DB reader: write it with CreateDB (args db_type, db)"));
  }
  return args;
}

OperatorDef WithDbReaderArgs(const OperatorDef& def, const OperatorDef& reader_args) {
  OperatorDef merged = def;
  const ArgumentReader own(def.arg());
  for (const Argument& arg : reader_args.arg()) {
    if (!own.Has(arg.name())) *merged.add_arg() = arg;
  }
  return merged;
}

}  // namespace braid
