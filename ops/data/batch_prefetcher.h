// BatchPrefetcher: decodes batches of a data set (an ExampleSource: an IDX image set, a DB of
// TensorProtos records, ...) on a background thread.
//
// A batch holds, for each output of the source (ops/data/example_source.h), batch_size examples'
// values one after the other: output i of a batch is [batch_size] + outputs()[i].dims.
// Examples are served as one endless stream: epoch 0's order, then epoch 1's, and so on, each
// epoch visiting every example exactly once (ExampleOrder). A batch is the next batch_size
// examples of the stream, so a batch may straddle two epochs and every batch has the same shape.
// With shuffle on, each epoch's order is a permutation drawn from (seed, epoch) alone, so the
// stream is deterministic for a seed and a run can resume at any example (start_example) without
// replaying earlier epochs.
//
//   BatchPrefetcher prefetcher(std::move(source), {.batch_size = 64, .seed = 7});
//   prefetcher.NextBatch({data, labels});   // waits for a batch; one pointer per output
//
// A LabeledImages set has a shorthand (LabeledImagesSource, pixels normalised as
// (pixel / 255 - mean) / std with the options' mean and std):
//
//   BatchPrefetcher prefetcher(images, {.batch_size = 64, .seed = 7});
//   std::vector<float> data(64 * images->image_size());
//   std::vector<int32_t> labels(64);
//   prefetcher.NextBatch(data.data(), labels.data());
//
// Ownership and threads: the prefetcher owns the source and one producer
// thread, started by the constructor and joined by the destructor. The producer fills at most
// queue_capacity batch buffers ahead; the buffers are allocated once and recycled, so steady state
// allocates nothing. mu_ guards the ready and free buffer lists, stop_ and error_; the producer
// decodes into a buffer it has taken off the free list without holding mu_. NextBatch may be
// called by one consumer thread at a time.
#ifndef BRAID_OPS_DATA_BATCH_PREFETCHER_H_
#define BRAID_OPS_DATA_BATCH_PREFETCHER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ops/data/example_source.h"
#include "ops/data/labeled_images.h"

namespace braid {

// The order in which a data set's examples are visited, epoch after epoch.
//
//   ExampleOrder order(5, /*shuffle=*/true, /*seed=*/1);
//   order.Next();   // an index in [0, 5); the first 5 calls return each index once
//
// Not thread-safe; a value type.
class ExampleOrder {
 public:
  ExampleOrder(int64_t count, bool shuffle, uint64_t seed, int64_t start_example = 0);

  int64_t Next();
  // The epoch the next index belongs to.
  int64_t epoch() const { return epoch_; }

 private:
  void StartEpoch(int64_t epoch);

  int64_t count_;
  bool shuffle_;
  uint64_t seed_;
  int64_t epoch_ = 0;
  int64_t position_ = 0;  // within epoch_
  std::vector<int64_t> order_;
};

class BatchPrefetcher {
 public:
  struct Options {
    int64_t batch_size = 64;
    bool shuffle = true;
    uint64_t seed = 0;
    float mean = 0.f;  // the LabeledImages constructor's normalisation
    float std = 1.f;
    int queue_capacity = 4;
    int64_t start_example = 0;  // examples of the stream to skip (resuming a run)
    // Sharding (one process of a multi-process job): the stream is read in global batches of
    // batch_size * num_shards examples, and this reader serves shard shard_id's slice of each,
    // examples [shard_id * batch_size, (shard_id + 1) * batch_size) of it. So the shards are
    // disjoint and together read what one reader of the global batch would, in its order.
    // start_example counts examples of the whole stream.
    int num_shards = 1;
    int shard_id = 0;
  };

  // Throws braid::Error for a non-positive batch size or queue capacity, or an empty source.
  BatchPrefetcher(std::unique_ptr<ExampleSource> source, const Options& options);
  // A LabeledImagesSource (ops/data/labeled_images_source.h) with options.mean and options.std;
  // also throws for a std that is not positive.
  BatchPrefetcher(std::shared_ptr<const LabeledImages> images, const Options& options);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // Copies the next batch's output i into outputs[i] (batch_size * source outputs()[i].bytes()
  // bytes), waiting for the producer if needed. Rethrows an exception the producer died with.
  void NextBatch(const std::vector<void*>& outputs);
  // The two outputs of a LabeledImages source: data ([batch_size, C, H, W]) and labels.
  void NextBatch(float* data, int32_t* labels) { NextBatch({data, labels}); }

  const ExampleSource& source() const { return *source_; }
  const Options& options() const { return options_; }

 private:
  struct Batch {
    std::vector<std::vector<uint8_t>> outputs;  // one per source output
  };

  void ProduceLoop();
  void Decode(Batch* batch);

  const std::unique_ptr<ExampleSource> source_;  // Decode: by the producer thread only
  const Options options_;
  ExampleOrder order_;  // used by the producer thread only
  std::vector<Batch> buffers_;

  std::mutex mu_;
  std::condition_variable ready_or_stopped_;  // a batch was queued, or the producer died
  std::condition_variable free_or_stopped_;   // a buffer was freed, or stop_ was set
  std::deque<Batch*> ready_;                  // guarded by mu_; oldest first
  std::deque<Batch*> free_;                   // guarded by mu_
  bool stop_ = false;                         // guarded by mu_
  std::exception_ptr error_;                  // guarded by mu_

  std::thread producer_;  // last: started once every other member exists
};

}  // namespace braid

#endif  // BRAID_OPS_DATA_BATCH_PREFETCHER_H_
