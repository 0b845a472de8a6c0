#include "ops/data/reader_args.h"

#include <string>
#include <vector>

#include "ops/common/op_checks.h"
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

const std::vector<ArgSpec>& ReaderArgSpecs() {
  static const auto* specs = new std::vector<ArgSpec>{
      {"batch_size", ArgKind::kInt},    {"shuffle", ArgKind::kInt},    {"prefetch", ArgKind::kInt},
      {"start_example", ArgKind::kInt}, {"num_shards", ArgKind::kInt}, {"shard_id", ArgKind::kInt},
  };
  return *specs;
}

int64_t ReaderBatchSize(const OperatorDef& def) {
  const ArgumentReader args(def.arg());
  if (!args.Has("batch_size")) ThrowInvalidArgument("argument 'batch_size' is required");
  const int64_t batch_size = args.Get<int64_t>("batch_size", 0);
  if (batch_size <= 0) {
    ThrowInvalidArgument("batch_size must be positive, got " + std::to_string(batch_size));
  }
  return batch_size;
}

void ServeNextBatch(BatchPrefetcher* prefetcher, int64_t batch_size, OperatorBase* op) {
  const std::vector<ExampleOutput>& outputs = prefetcher->source().outputs();
  std::vector<void*> data(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::vector<int64_t> dims = {batch_size};
    dims.insert(dims.end(), outputs[i].dims.begin(), outputs[i].dims.end());
    Tensor* output = op->Output(static_cast<int>(i), outputs[i].dtype, dims);
    data[i] = output->raw_mutable_data(outputs[i].dtype);
  }
  prefetcher->NextBatch(data);
}

}  // namespace braid
