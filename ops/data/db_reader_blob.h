// The "DBReader" blob of Caffe2's two-op form (CreateDB, then TensorProtosDBInput reading it).
//
// Caffe2's blob holds a live DB reader; braid's blobs are tensors (runtime/core/workspace.h), so
// CreateDB writes a descriptor instead: a uint8 tensor holding a serialized OperatorDef whose only
// content is CreateDB's arguments (db_type, db, num_shards, shard_id). TensorProtosDBInput opens
// the DB it describes, its own arguments taking precedence.
//
//   Tensor reader;
//   WriteDbReaderBlob(create_db_def, &reader);
//   OperatorDef args = ReadDbReaderBlob(reader, "dbreader");   // args.arg(): db_type, db, ...
//
// ReadDbReaderBlob throws braid::Error (InvalidArgument) naming the blob when it is not such a
// descriptor (not uint8, never written, or not a serialized OperatorDef). Pure functions.
#ifndef BRAID_OPS_DATA_DB_READER_BLOB_H_
#define BRAID_OPS_DATA_DB_READER_BLOB_H_

#include <string>

#include "proto/braid.pb.h"
#include "runtime/core/tensor.h"

namespace braid {

// The arguments CreateDB passes on to its readers.
inline constexpr const char* kDbReaderArgs[] = {"db_type", "db", "num_shards", "shard_id"};

void WriteDbReaderBlob(const OperatorDef& create_db, Tensor* blob);
OperatorDef ReadDbReaderBlob(const Tensor& blob, const std::string& blob_name);
// `def` with the descriptor's arguments added where `def` lacks them.
OperatorDef WithDbReaderArgs(const OperatorDef& def, const OperatorDef& reader_args);

}  // namespace braid

#endif  // BRAID_OPS_DATA_DB_READER_BLOB_H_
