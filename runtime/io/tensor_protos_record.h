// Records of serialized TensorProtos, as Caffe2's DB readers and writers hold them: each record a
// TensorProtos whose i-th TensorProto is the example's i-th input (an image, its label, ...).
//
// RecordTensor is one such tensor's element type and dims. braid reads the values where Caffe2
// writes them: FLOAT in float_data, INT32 in int32_data, INT64 in int64_data, DOUBLE in
// double_data, BOOL in int32_data, BYTE (Caffe2's uint8 images, make_mnist_db) in byte_data,
// UINT8 in int32_data or byte_data; any of them may instead be raw_data (little-endian bytes).
//
//   TensorProtos record;   // parsed from a DB's value
//   RecordTensor image = RecordTensorOf(record.protos(0), "lmdb '/tmp/db' record '00000000'");
//   std::vector<uint8_t> bytes(image.bytes());
//   CopyRecordValues(record.protos(0), image, bytes.data(), where);
//   Tensor t;                                          // or checkpoints' (runtime/io/checkpoint.h)
//   t.Resize(image.dtype, image.dims);
//   CopyRecordValues(record.protos(0), image,
//                    [&] { return static_cast<uint8_t*>(t.raw_mutable_data(image.dtype)); },
//                    where);
//
//   TensorProtosDbLayout layout = DescribeTensorProtosDb("lmdb", "/tmp/db");
//   layout.count;          // records
//   layout.tensors[0];     // the first record's first tensor: uint8 [1,28,28]
//
// Errors throw braid::Error (InvalidArgument) naming `where` (the DB, the record's key and the
// tensor's index): an unsupported data_type, values that do not fill the dims, a record that is
// not a TensorProtos. Thread safety: pure functions.
#ifndef BRAID_RUNTIME_IO_TENSOR_PROTOS_RECORD_H_
#define BRAID_RUNTIME_IO_TENSOR_PROTOS_RECORD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "braid/dtype.h"
#include "proto/braid.pb.h"

namespace braid {

struct RecordTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> dims;

  int64_t numel() const;
  int64_t bytes() const { return numel() * static_cast<int64_t>(DTypeSize(dtype)); }
  bool operator==(const RecordTensor& other) const = default;
  // "uint8[1,28,28]"
  std::string ToString() const;
};

RecordTensor RecordTensorOf(const TensorProto& proto, const std::string& where);
// Writes the proto's values into `out` (tensor.bytes() bytes), `tensor` being its RecordTensorOf.
void CopyRecordValues(const TensorProto& proto, const RecordTensor& tensor, uint8_t* out,
                      const std::string& where);
// The same, asking for the memory (tensor.bytes() bytes) only once the values are checked to fill
// the dims and fit the dtype: a proto that claims dims its values do not fill allocates nothing.
using RecordDestination = std::function<uint8_t*()>;
void CopyRecordValues(const TensorProto& proto, const RecordTensor& tensor,
                      const RecordDestination& out, const std::string& where);
// Parses a DB value into `record` (reusing its memory).
void ParseRecord(std::string_view value, const std::string& where, TensorProtos* record);

// A DB of TensorProtos records: how many, and the tensors of the first (in key order).
struct TensorProtosDbLayout {
  int64_t count = 0;
  std::vector<RecordTensor> tensors;
};
// Throws as runtime/io/db.h's OpenDb does, and InvalidArgument for an empty DB or a bad first
// record.
TensorProtosDbLayout DescribeTensorProtosDb(const std::string& type, const std::string& path);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_TENSOR_PROTOS_RECORD_H_
