#include "ops/data/create_db_op.h"

#include <string>

#include "ops/common/op_checks.h"
#include "ops/data/db_reader_blob.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/io/db.h"

namespace braid {

CreateDbOp::CreateDbOp(const OperatorDef& def, Workspace* ws) : OperatorBase(def, ws) {
  if (!ArgumentReader(def.arg()).Has("db")) ThrowInvalidArgument("argument 'db' is required");
}

void CreateDbOp::Run() {
  const ArgumentReader args(def().arg());
  OpenDb(args.Get<std::string>("db_type", "lmdb"), args.Get<std::string>("db", ""), DbMode::kRead);
  WriteDbReaderBlob(def(), Output(0));
}

BRAID_OPERATOR_SCHEMA(CreateDB)
    .Arg("db_type", ArgKind::kString)
    .Arg("db", ArgKind::kString)
    .Arg("num_shards", ArgKind::kInt)
    .Arg("shard_id", ArgKind::kInt)
    .NumInputs(0)
    .NumOutputs(1)
    .HostOnly()
    .SetDoc(
        "Opens a DB (db_type, db) for TensorProtosDBInput; writes a descriptor of it (uint8), "
        "braid's stand-in for Caffe2's DB reader blob.");

BRAID_REGISTER_CPU_OPERATOR(CreateDB, CreateDbOp);

}  // namespace braid
