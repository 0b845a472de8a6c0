// ExampleSource: a data set that BatchPrefetcher (ops/data/batch_prefetcher.h) batches: `count`
// examples, each made of the same outputs (an image and its label, ...), each output of a fixed
// element type and per-example shape.
//
//   class MySource final : public ExampleSource {
//    public:
//     int64_t count() const override { return 100; }
//     const std::vector<ExampleOutput>& outputs() const override { return outputs_; }
//     void Decode(int64_t example, const std::vector<uint8_t*>& slots) override { ... }
//   };
//
// Decode writes example `example` (in [0, count)) into slots[i], output i's place in a batch
// buffer (outputs()[i].bytes() bytes). It may throw braid::Error naming the example; the
// prefetcher hands the error to the consumer.
//
// Thread safety: count() and outputs() are fixed at construction and may be read from any thread;
// Decode is called by one thread at a time (the prefetcher's producer), not always the thread that
// built the source.
#ifndef BRAID_OPS_DATA_EXAMPLE_SOURCE_H_
#define BRAID_OPS_DATA_EXAMPLE_SOURCE_H_

#include <cstdint>
#include <vector>

#include "braid/dtype.h"

namespace braid {

// One output of every example: its element type and shape (a batch adds a first dim).
struct ExampleOutput {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> dims;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  int64_t bytes() const { return numel() * static_cast<int64_t>(DTypeSize(dtype)); }
};

class ExampleSource {
 public:
  virtual ~ExampleSource() = default;
  virtual int64_t count() const = 0;
  virtual const std::vector<ExampleOutput>& outputs() const = 0;
  virtual void Decode(int64_t example, const std::vector<uint8_t*>& slots) = 0;
};

}  // namespace braid

#endif  // BRAID_OPS_DATA_EXAMPLE_SOURCE_H_
