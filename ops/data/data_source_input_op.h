// DataSourceInput: batches of a data source the application registered
// (<braid/data_source.h>), one output per field, read ahead on a background thread.
//
//   op { type: "DataSourceInput" output: "x" output: "y"
//        arg { name: "source" s: "squares" } arg { name: "batch_size" i: 10 } }
//
// Output i = [batch_size] + field i's dims, of its dtype. Arguments: source (required: the
// registered name), batch_size (required, > 0), and the readers' shuffle (0), seed (0),
// prefetch (4), start_example (0), num_shards (1), shard_id (0) (ops/data/reader_args.h): the
// stream, its shuffling and its shards are exactly IdxImageInput's and TensorProtosDBInput's.
//
// Errors (braid::Error, prefixed by the executor with the net and the op): an unregistered
// source, or outputs that do not match its fields in number, fail the net's build (and shape
// inference) naming the source; a Read that fails fails the run that would have served its
// example, naming the source, the example and the source's Status.
//
// Ownership and threads: the op holds the source's registry entry (so the source outlives an
// UnregisterDataSource while the op exists) and a BatchPrefetcher whose producer thread calls
// Read; it is joined when the op is destroyed. Run only copies a ready batch into the outputs.
#ifndef BRAID_OPS_DATA_DATA_SOURCE_INPUT_OP_H_
#define BRAID_OPS_DATA_DATA_SOURCE_INPUT_OP_H_

#include <cstdint>
#include <memory>

#include "ops/data/batch_prefetcher.h"
#include "runtime/core/operator.h"

namespace braid {

class DataSourceInputOp final : public OperatorBase {
 public:
  DataSourceInputOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 private:
  int64_t batch_size_ = 0;
  std::unique_ptr<BatchPrefetcher> prefetcher_;
};

}  // namespace braid

#endif  // BRAID_OPS_DATA_DATA_SOURCE_INPUT_OP_H_
