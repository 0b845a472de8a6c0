#include "ops/data/reader_args.h"

#include "runtime/core/argument.h"

namespace braid {

BatchPrefetcher::Options ReaderPrefetchOptions(const OperatorDef& def, int64_t batch_size,
                                               bool shuffle_default) {
  const ArgumentReader args(def.arg());
  BatchPrefetcher::Options o;
  o.batch_size = batch_size;
  o.shuffle = args.Get<bool>("shuffle", shuffle_default);
  o.seed = static_cast<uint64_t>(args.Get<int64_t>("seed", 0));
  o.queue_capacity = args.Get<int>("prefetch", 4);
  o.start_example = args.Get<int64_t>("start_example", 0);
  o.num_shards = args.Get<int>("num_shards", 1);
  o.shard_id = args.Get<int>("shard_id", 0);
  return o;
}

}  // namespace braid
