// braid's public API for data an application owns (installed as <braid/data_source.h>).
//
// A DataSource is a data set the application serves one example at a time, by index (PyTorch's
// map-style Dataset): size() examples, each made of the same fields (an image and its label, or
// any named tensors), each field of a fixed element type and per-example shape. braid does the
// rest, as it does for its own readers: it batches the examples, reshuffles them every epoch from
// a seed (a permutation drawn from (seed, epoch) alone, so a resumed run reads on where it
// stopped), shards each global batch over the processes of a job, and reads ahead on a background
// thread into a bounded queue of batches.
//
//   class Squares final : public braid::DataSource {  // example i: x = i, y = i * i
//    public:
//     int64_t size() const override { return 100; }
//     std::vector<braid::DataField> fields() const override {
//       return {{"x", braid::DType::kFloat32, {1}}, {"y", braid::DType::kInt64, {}}};
//     }
//     braid::Status Read(int64_t index, const std::vector<void*>& slots) override {
//       *static_cast<float*>(slots[0]) = static_cast<float>(index);
//       *static_cast<int64_t*>(slots[1]) = index * index;
//       return braid::Status::OK();
//     }
//   };
//   braid::Status s = braid::RegisterDataSource("squares", std::make_shared<Squares>());
//   // A net reads it in batches: output i is field i, [batch_size] + its dims.
//   //   op { type: "DataSourceInput" output: "x" output: "y"
//   //        arg { name: "source" s: "squares" } arg { name: "batch_size" i: 10 } }
//   if (s.ok()) s = braid::UnregisterDataSource("squares");
//   if (!s.ok()) std::cerr << s.ToString() << "\n";
//
// Two ways in:
//   - the Trainer: TrainerOptions::data = "source", with the train and test sets in
//     TrainerOptions::source (<braid/trainer.h>; it registers them itself);
//   - any net the Predictor or Session runs: register the source under a name, and a
//     DataSourceInput op names it. Its arguments: source (the name), batch_size (> 0), shuffle
//     (0: index order; 1: a new order every epoch), seed (0), prefetch (4: batches read ahead),
//     start_example (0: examples of the stream to skip), num_shards (1) and shard_id (0): this
//     reader serves shard shard_id's batch_size slice of each global batch of
//     batch_size * num_shards examples. Batches are always full: the stream runs on into the
//     next epoch. The op runs on the host; its outputs' shapes are known before it runs.
//
// The contract braid relies on:
//   - size() (> 0) and fields() (1 to 64 of them, each with a non-empty name, a dtype and dims
//     of sizes >= 0, an example's bytes within int64) are asked once, when the source is
//     registered; braid keeps what they said.
//   - Read(index, slots) writes example `index` (in [0, size())) into slots[i], field i's place
//     in a batch: DTypeSize(dtype) * (the product of its dims) bytes, suitably aligned for the
//     dtype. It returns OK, or a Status that ends the run: the net's Run (or the Trainer's)
//     returns it, naming the net, the op, the source and the example. An exception thrown by
//     Read is reported the same way. A bool field is written as bytes of 0 or 1.
//   - Threads: Read is called on braid's reader threads, never two calls on one source object
//     at once (braid serialises them, and the registration's size() and fields() with them,
//     even when one object is registered under several names or is both the Trainer's train and
//     test set), so a source needs no lock of its own; it must not assume the thread that
//     created it.
//   - Lifetime: braid shares ownership. Unregistering a name stops new nets from finding it;
//     ops already built keep the source alive until they are destroyed.
// Errors: RegisterDataSource returns InvalidArgument, registering nothing, for an empty name, a
// name already registered, a null source or one that breaks the contract's first point (or
// whose size() or fields() throws);
// UnregisterDataSource returns NotFound for a name not registered. A net naming an unregistered
// source fails to build, naming the source. Both functions are thread-safe.
#ifndef BRAID_DATA_SOURCE_H_
#define BRAID_DATA_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braid/dtype.h"
#include "braid/status.h"

namespace braid {

// One field of every example: its name (for errors and logs), element type and shape (a batch
// adds a first dim).
struct DataField {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> dims;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual int64_t size() const = 0;
  virtual std::vector<DataField> fields() const = 0;
  virtual Status Read(int64_t index, const std::vector<void*>& slots) = 0;
};

Status RegisterDataSource(const std::string& name, std::shared_ptr<DataSource> source);
Status UnregisterDataSource(const std::string& name);

}  // namespace braid

#endif  // BRAID_DATA_SOURCE_H_
