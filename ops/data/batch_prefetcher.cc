#include "ops/data/batch_prefetcher.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "braid/status.h"

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
int64_t CheckedCount(const LabeledImages& images, const BatchPrefetcher::Options& o) {
  std::string problem;
  if (images.count <= 0) problem = "the data set is empty";
  if (o.batch_size <= 0)
    problem = "batch_size must be positive, got " + std::to_string(o.batch_size);
  if (o.queue_capacity <= 0) {
    problem =
        "the prefetch queue capacity must be positive, got " + std::to_string(o.queue_capacity);
  }
  if (!(o.std > 0)) problem = "std must be positive, got " + std::to_string(o.std);
  if (o.start_example < 0) {
    problem = "start_example must be >= 0, got " + std::to_string(o.start_example);
  }
  if (o.num_shards < 1 || o.shard_id < 0 || o.shard_id >= o.num_shards) {
    problem = "shard_id must be in [0, num_shards), got shard " + std::to_string(o.shard_id) +
              " of " + std::to_string(o.num_shards);
  }
  if (!problem.empty()) throw Error(Status::InvalidArgument("batch prefetcher: " + problem));
  return images.count;
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

BatchPrefetcher::BatchPrefetcher(std::shared_ptr<const LabeledImages> images,
                                 const Options& options)
    : images_(std::move(images)),
      options_(options),
      order_(CheckedCount(*images_, options), options.shuffle, options.seed, options.start_example),
      buffers_(static_cast<size_t>(options.queue_capacity)) {
  for (int v = 0; v < 256; ++v) normalised_[v] = (v / 255.f - options_.mean) / options_.std;
  for (Batch& batch : buffers_) {
    batch.data.resize(static_cast<size_t>(options_.batch_size * images_->image_size()));
    batch.labels.resize(static_cast<size_t>(options_.batch_size));
    free_.push_back(&batch);
  }
  producer_ = std::thread([this] { ProduceLoop(); });
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  free_or_stopped_.notify_all();
  producer_.join();
}

void BatchPrefetcher::NextBatch(float* data, int32_t* labels) {
  Batch* batch;
  {
    std::unique_lock<std::mutex> lock(mu_);
    ready_or_stopped_.wait(lock, [this] { return !ready_.empty() || error_ != nullptr; });
    if (ready_.empty()) std::rethrow_exception(error_);
    batch = ready_.front();
    ready_.pop_front();
  }
  std::copy(batch->data.begin(), batch->data.end(), data);
  std::copy(batch->labels.begin(), batch->labels.end(), labels);
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
  const int64_t size = images_->image_size();
  const int64_t before = options_.shard_id * options_.batch_size;  // other shards' slices
  const int64_t after = (options_.num_shards - 1 - options_.shard_id) * options_.batch_size;
  for (int64_t skip = 0; skip < before; ++skip) order_.Next();
  for (int64_t b = 0; b < options_.batch_size; ++b) {
    const int64_t example = order_.Next();
    const uint8_t* pixels = images_->Image(example);
    float* out = batch->data.data() + b * size;
    for (int64_t p = 0; p < size; ++p) out[p] = normalised_[pixels[p]];
    batch->labels[b] = images_->labels[example];
  }
  for (int64_t skip = 0; skip < after; ++skip) order_.Next();
}

}  // namespace braid
