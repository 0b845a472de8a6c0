// The arguments every batching reader op shares (IdxImageInput, TensorProtosDBInput,
// DataSourceInput): how its BatchPrefetcher (ops/data/batch_prefetcher.h) orders, shards and
// buffers the stream.
//   shuffle        reshuffle every epoch from (seed, epoch); its default is the op's
//   seed (0), prefetch (4 batches), start_example (0), num_shards (1), shard_id (0)
// mean and std are not here: each op reads them its own way.
//
//   BatchPrefetcher::Options o = ReaderPrefetchOptions(def, batch_size, /*shuffle_default=*/true);
//
// And the run of a reader whose outputs are its source's, one per output (TensorProtosDBInput,
// DataSourceInput): ReaderBatchSize reads the required batch_size, ServeNextBatch shapes the op's
// outputs ([batch_size] + each source output's dims) and copies the next batch into them.
//
// The functions are thread-safe as their arguments are; the prefetcher checks the option values
// (BatchPrefetcher's constructor); ReaderBatchSize throws braid::Error for a missing or
// non-positive batch_size.
#ifndef BRAID_OPS_DATA_READER_ARGS_H_
#define BRAID_OPS_DATA_READER_ARGS_H_

#include <cstdint>
#include <vector>

#include "ops/data/batch_prefetcher.h"
#include "proto/braid.pb.h"
#include "runtime/core/arg_spec.h"
#include "runtime/core/operator.h"

namespace braid {

BatchPrefetcher::Options ReaderPrefetchOptions(const OperatorDef& def, int64_t batch_size,
                                               bool shuffle_default);

// The schema arguments above and batch_size (seed is every op's, runtime/core/op_schema.h).
const std::vector<ArgSpec>& ReaderArgSpecs();

int64_t ReaderBatchSize(const OperatorDef& def);

void ServeNextBatch(BatchPrefetcher* prefetcher, int64_t batch_size, OperatorBase* op);

}  // namespace braid

#endif  // BRAID_OPS_DATA_READER_ARGS_H_
