// DbExampleSource: a DB of serialized TensorProtos records (runtime/io/tensor_protos_record.h)
// as an ExampleSource (ops/data/example_source.h): example i is the i-th record in key order,
// output j its j-th TensorProto.
//
//   auto source = std::make_unique<DbExampleSource>("lmdb", "/tmp/train_lmdb",
//                                                   PixelNormalisation(0.286f, 0.353f));
//   source->outputs();   // float32 [1,28,28] (normalised uint8 images), int32 [] (labels)
//
// The first record fixes the outputs: one per TensorProto, of its type and dims. With a
// normalisation, output 0 must hold uint8 (images) and is served as float32, each pixel mapped as
// PixelNormalisation says (the bits IdxImageInput serves for the same pixels).
//
// The constructor opens the DB and reads its keys once (random access for shuffling: a key per
// record in memory, not the values); Decode seeks to the example's key and parses its record.
// Errors throw braid::Error naming the DB, the record's key and the tensor: a missing or unreadable
// DB, an empty one, a record that is not a TensorProtos, or whose tensors disagree in number,
// type or shape with the first record's.
//
// Thread safety: as ExampleSource; Decode uses one cursor (any thread, one at a time).
#ifndef BRAID_OPS_DATA_DB_EXAMPLE_SOURCE_H_
#define BRAID_OPS_DATA_DB_EXAMPLE_SOURCE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/data/example_source.h"
#include "ops/data/pixel_normalisation.h"
#include "proto/braid.pb.h"
#include "runtime/io/db.h"
#include "runtime/io/tensor_protos_record.h"

namespace braid {

class DbExampleSource final : public ExampleSource {
 public:
  DbExampleSource(const std::string& type, const std::string& path,
                  std::optional<PixelNormalisation> normalise = std::nullopt);

  int64_t count() const override { return static_cast<int64_t>(keys_.size()); }
  const std::vector<ExampleOutput>& outputs() const override { return outputs_; }
  void Decode(int64_t example, const std::vector<uint8_t*>& slots) override;

 private:
  std::unique_ptr<Db> db_;
  std::unique_ptr<DbCursor> cursor_;
  std::vector<std::string> keys_;
  std::vector<RecordTensor> tensors_;  // the first record's
  std::vector<ExampleOutput> outputs_;
  std::optional<PixelNormalisation> normalise_;
  TensorProtos record_;           // Decode's, reused
  std::vector<uint8_t> pixels_;   // Decode's uint8 image before normalisation
};

}  // namespace braid

#endif  // BRAID_OPS_DATA_DB_EXAMPLE_SOURCE_H_
