// TensorProtosDBInput: Caffe2's reader of a DB of serialized TensorProtos records
// (one TensorProto per input of an example: an image, its label, ...), batched and prefetched.
//
// Caffe2's two-op form, as its nets write it, runs here unchanged:
//
//   op { type: "CreateDB" output: "dbreader"
//        arg { name: "db_type" s: "lmdb" } arg { name: "db" s: "/tmp/train_lmdb" } }
//   op { type: "TensorProtosDBInput" input: "dbreader" output: "data" output: "label"
//        arg { name: "batch_size" i: 64 } }
//
// braid's blobs are tensors, so "dbreader" is not a live reader but a descriptor of the DB
// (CreateDB's arguments as a uint8 tensor, ops/data/create_db_op.h); CreateDB opens the DB to
// check it, and each TensorProtosDBInput reading the descriptor opens the DB itself. The one-op
// form names the DB directly and is what braid's Trainer emits, because then shape inference and
// memory planning see the outputs' shapes (read from the first record) before anything runs:
//
//   op { type: "TensorProtosDBInput" output: "data" output: "label"
//        arg { name: "db_type" s: "lmdb" } arg { name: "db" s: "/tmp/train_lmdb" }
//        arg { name: "batch_size" i: 64 }
//        arg { name: "mean" f: 0.286 } arg { name: "std" f: 0.353 } }
//
// Outputs: one per TensorProto of the records, output j = [batch_size] + the j-th tensor's dims,
// of its type (BYTE and UINT8 as uint8). Arguments:
//   batch_size            required, > 0
//   db_type ("lmdb"), db  the DB (the one-op form; or from the input's descriptor)
//   shuffle (0), seed (0) 0: key order, as Caffe2 reads; 1: reshuffle every epoch from
//                         (seed, epoch), exactly as IdxImageInput does
//   mean, std             (braid's) when given, output 0 must be uint8 images and is served as
//                         float32 (pixel / 255 - mean) / std: the bits IdxImageInput serves
//   prefetch (4)          batches decoded ahead by the background thread
//   start_example (0)     examples of the stream to skip (resuming)
//   num_shards (1), shard_id (0)   as IdxImageInput: shard shard_id's batch_size slice of each
//                         global batch of batch_size * num_shards examples (also taken from
//                         CreateDB's arguments). Caffe2 interleaves single records instead; braid
//                         keeps one rule for every reader, so that shards of a job read what one
//                         reader of the global batch would.
// Every batch is full: the stream runs on into the next epoch (ops/data/batch_prefetcher.h).
//
// Errors (braid::Error, prefixed by the executor with the net and the op): a missing or unreadable
// DB (naming its path and LMDB's text) fails the net's build in the one-op form, and the first run
// (or the build, once the descriptor is written) in the two-op form; a record that is not a
// TensorProtos, or whose tensors disagree in number, type or shape with the first record's, fails
// the run that would have served it, naming the record's key; outputs that do not match the
// records' tensors in number fail the build.
//
// Ownership and threads: the op owns a BatchPrefetcher (ops/data/batch_prefetcher.h) over a
// DbExampleSource (ops/data/db_example_source.h), whose thread starts once the DB is known and is
// joined when the op is destroyed. Run only copies a ready batch into the outputs.
#ifndef BRAID_OPS_DATA_TENSOR_PROTOS_DB_INPUT_OP_H_
#define BRAID_OPS_DATA_TENSOR_PROTOS_DB_INPUT_OP_H_

#include <memory>

#include "ops/data/batch_prefetcher.h"
#include "runtime/core/operator.h"

namespace braid {

class TensorProtosDbInputOp final : public OperatorBase {
 public:
  TensorProtosDbInputOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 private:
  // Opens the DB that `def` (the op's arguments, with the descriptor's) names.
  void Start(const OperatorDef& def);

  int64_t batch_size_ = 0;
  std::unique_ptr<BatchPrefetcher> prefetcher_;
};

}  // namespace braid

#endif  // BRAID_OPS_DATA_TENSOR_PROTOS_DB_INPUT_OP_H_
