// The arguments every batching reader op shares (IdxImageInput, TensorProtosDBInput): how its
// BatchPrefetcher (ops/data/batch_prefetcher.h) orders, shards and buffers the stream.
//   shuffle        reshuffle every epoch from (seed, epoch); its default is the op's
//   seed (0), prefetch (4 batches), start_example (0), num_shards (1), shard_id (0)
// mean and std are not here: each op reads them its own way.
//
//   BatchPrefetcher::Options o = ReaderPrefetchOptions(def, batch_size, /*shuffle_default=*/true);
//
// Pure; thread-safe. The prefetcher checks the values (BatchPrefetcher's constructor).
#ifndef BRAID_OPS_DATA_READER_ARGS_H_
#define BRAID_OPS_DATA_READER_ARGS_H_

#include <cstdint>

#include "ops/data/batch_prefetcher.h"
#include "proto/braid.pb.h"

namespace braid {

BatchPrefetcher::Options ReaderPrefetchOptions(const OperatorDef& def, int64_t batch_size,
                                               bool shuffle_default);

}  // namespace braid

#endif  // BRAID_OPS_DATA_READER_ARGS_H_
