// IdxImageInput: a data-reader op serving batches of an IDX image data set (MNIST,
// Fashion-MNIST) or of synthetic images of the same shape.
//
//   op { type: "IdxImageInput" output: "data" output: "label"
//        arg { name: "images" s: "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz" }
//        arg { name: "labels" s: "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz" }
//        arg { name: "batch_size" i: 64 } arg { name: "seed" i: 1 }
//        arg { name: "mean" f: 0.286 } arg { name: "std" f: 0.353 } }
//
// Outputs: 0 `data`, float32 [batch_size, channels, height, width], pixels normalised as
// (pixel / 255 - mean) / std; 1 `label`, int32 [batch_size]. Arguments:
//   images, labels       IDX files (gzip or raw); required unless synthetic
//   batch_size           required, > 0
//   shuffle (1), seed (0)   reshuffle every epoch from (seed, epoch); deterministic per seed
//   mean (0), std (1)     normalisation
//   channels (1), height (28), width (28)   the image shape (checked against the files); shape
//                         inference reads them, so it needs no files
//   num_classes (10)      labels must be below it
//   synthetic (0)         1: serve MakeSyntheticImages data of the same shape (no files)
//   synthetic_examples (1024)   the synthetic data set's size
//   prefetch (4)          batches decoded ahead by the background thread
//   start_example (0)     examples of the stream to skip (to resume a run where it stopped)
//   num_shards (1), shard_id (0)   serve shard shard_id's batch_size slice of each global batch
//                         of batch_size * num_shards examples (one rank of a multi-process job;
//                         ops/data/batch_prefetcher.h)
// Every batch is full: the stream runs on into the next epoch (see ops/data/batch_prefetcher.h).
//
// Ownership and threads: the op owns a BatchPrefetcher, whose decoding thread starts when the op
// is built (the files are read and validated then, so a bad path fails the net's build) and is
// joined when the op is destroyed. Run only copies a ready batch into the outputs.
#ifndef BRAID_OPS_DATA_IDX_IMAGE_INPUT_OP_H_
#define BRAID_OPS_DATA_IDX_IMAGE_INPUT_OP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ops/data/batch_prefetcher.h"
#include "runtime/core/operator.h"

namespace braid {

class IdxImageInputOp final : public OperatorBase {
 public:
  IdxImageInputOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 private:
  std::vector<int64_t> data_dims_;  // [batch_size, channels, height, width]
  std::unique_ptr<BatchPrefetcher> prefetcher_;
};

}  // namespace braid

#endif  // BRAID_OPS_DATA_IDX_IMAGE_INPUT_OP_H_
