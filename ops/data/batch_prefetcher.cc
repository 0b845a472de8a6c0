#include "ops/data/batch_prefetcher.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "braid/status.h"
#include "ops/data/labeled_images_source.h"
#include "runtime/core/element_count.h"

namespace braid {
namespace {

// SplitMix64's finaliser: decorrelates the seeds of consecutive epochs.
uint64_t MixSeed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [0, n), by rejection, from raw engine output only (portable across libraries).
uint64_t UniformBelow(std::mt19937_64& engine, uint64_t n) {
  const uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % n;
  uint64_t x;
  do {
    x = engine();
  } while (x >= limit);
  return x % n;
}

// The number of examples, after checking the options against the data set.
int64_t CheckedCount(const ExampleSource& source, const BatchPrefetcher::Options& o) {
  std::string problem;
  if (source.count() <= 0) problem = "the data set is empty";
  if (o.batch_size <= 0)
    problem = "batch_size must be positive, got " + std::to_string(o.batch_size);
  if (o.queue_capacity <= 0) {
    problem =
        "the prefetch queue capacity must be positive, got " + std::to_string(o.queue_capacity);
  }
  if (o.start_example < 0) {
    problem = "start_example must be >= 0, got " + std::to_string(o.start_example);
  }
  if (o.num_shards < 1 || o.shard_id < 0 || o.shard_id >= o.num_shards) {
    problem = "shard_id must be in [0, num_shards), got shard " + std::to_string(o.shard_id) +
              " of " + std::to_string(o.num_shards);
  }
  for (const ExampleOutput& output : source.outputs()) {
    if (!problem.empty()) break;
    std::vector<int64_t> batch = {o.batch_size};
    batch.insert(batch.end(), output.dims.begin(), output.dims.end());
    try {
      ElementCount(batch, output.dtype);  // a batch buffer's bytes fit int64
    } catch (const Error& e) {
      problem = "a batch of " + std::to_string(o.batch_size) + ": " + e.status().message();
    }
  }
  if (!problem.empty()) throw Error(Status::InvalidArgument("batch prefetcher: " + problem));
  return source.count();
}

}  // namespace

ExampleOrder::ExampleOrder(int64_t count, bool shuffle, uint64_t seed, int64_t start_example)
    : count_(count), shuffle_(shuffle), seed_(seed), order_(static_cast<size_t>(count)) {
  StartEpoch(start_example / count);
  position_ = start_example % count;
}

void ExampleOrder::StartEpoch(int64_t epoch) {
  epoch_ = epoch;
  position_ = 0;
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (!shuffle_) return;
  std::mt19937_64 engine(MixSeed(seed_ ^ MixSeed(static_cast<uint64_t>(epoch))));
  for (int64_t i = count_ - 1; i > 0; --i) {
    std::swap(order_[i], order_[UniformBelow(engine, static_cast<uint64_t>(i) + 1)]);
  }
}

int64_t ExampleOrder::Next() {
  if (position_ == count_) StartEpoch(epoch_ + 1);
  return order_[position_++];
}

BatchPrefetcher::BatchPrefetcher(std::unique_ptr<ExampleSource> source, const Options& options)
    : source_(std::move(source)),
      options_(options),
      order_(CheckedCount(*source_, options), options.shuffle, options.seed, options.start_example),
      buffers_(static_cast<size_t>(options.queue_capacity)) {
  for (Batch& batch : buffers_) {
    for (const ExampleOutput& output : source_->outputs()) {
      batch.outputs.emplace_back(static_cast<size_t>(options_.batch_size * output.bytes()));
    }
    free_.push_back(&batch);
  }
  producer_ = std::thread([this] { ProduceLoop(); });
}

BatchPrefetcher::BatchPrefetcher(std::shared_ptr<const LabeledImages> images,
                                 const Options& options)
    : BatchPrefetcher(std::make_unique<LabeledImagesSource>(std::move(images), options.mean,
                                                            options.std),
                      options) {}

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  free_or_stopped_.notify_all();
  producer_.join();
}

void BatchPrefetcher::NextBatch(const std::vector<void*>& outputs) {
  Batch* batch;
  {
    std::unique_lock<std::mutex> lock(mu_);
    ready_or_stopped_.wait(lock, [this] { return !ready_.empty() || error_ != nullptr; });
    if (ready_.empty()) std::rethrow_exception(error_);
    batch = ready_.front();
    ready_.pop_front();
  }
  for (size_t i = 0; i < batch->outputs.size(); ++i) {
    std::copy(batch->outputs[i].begin(), batch->outputs[i].end(),
              static_cast<uint8_t*>(outputs.at(i)));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(batch);
  }
  free_or_stopped_.notify_one();
}

void BatchPrefetcher::ProduceLoop() {
  try {
    for (;;) {
      Batch* batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        free_or_stopped_.wait(lock, [this] { return !free_.empty() || stop_; });
        if (stop_) return;
        batch = free_.front();
        free_.pop_front();
      }
      Decode(batch);
      {
        std::lock_guard<std::mutex> lock(mu_);
        ready_.push_back(batch);
      }
      ready_or_stopped_.notify_one();
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    ready_or_stopped_.notify_all();
  }
}

void BatchPrefetcher::Decode(Batch* batch) {
  const std::vector<ExampleOutput>& outputs = source_->outputs();
  std::vector<uint8_t*> slots(outputs.size());
  const int64_t before = options_.shard_id * options_.batch_size;  // other shards' slices
  const int64_t after = (options_.num_shards - 1 - options_.shard_id) * options_.batch_size;
  for (int64_t skip = 0; skip < before; ++skip) order_.Next();
  for (int64_t b = 0; b < options_.batch_size; ++b) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      slots[i] = batch->outputs[i].data() + b * outputs[i].bytes();
    }
    source_->Decode(order_.Next(), slots);
  }
  for (int64_t skip = 0; skip < after; ++skip) order_.Next();
}

}  // namespace braid
