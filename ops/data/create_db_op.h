// CreateDB: Caffe2's op that opens a DB for its readers (TensorProtosDBInput,
// ops/data/tensor_protos_db_input_op.h).
//
//   op { type: "CreateDB" output: "dbreader"
//        arg { name: "db_type" s: "lmdb" } arg { name: "db" s: "/tmp/train_lmdb" } }
//
// Output 0 is a descriptor of the DB (ops/data/db_reader_blob.h: braid's blobs are tensors, so it
// holds the DB's arguments, not a live reader). Arguments: db (required), db_type ("lmdb"),
// num_shards (1), shard_id (0), passed on to the readers. Run checks that the DB opens: a missing
// or unreadable DB is a braid::Error naming its path and LMDB's text.
//
// Thread safety: as every op; it keeps no state between runs.
#ifndef BRAID_OPS_DATA_CREATE_DB_OP_H_
#define BRAID_OPS_DATA_CREATE_DB_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class CreateDbOp final : public OperatorBase {
 public:
  CreateDbOp(const OperatorDef& def, Workspace* ws);
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_DATA_CREATE_DB_OP_H_
