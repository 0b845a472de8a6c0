#include "ops/data/db_example_source.h"

#include "braid/status.h"

namespace braid {

DbExampleSource::DbExampleSource(const std::string& type, const std::string& path,
                                 std::optional<PixelNormalisation> normalise)
    : db_(OpenDb(type, path, DbMode::kRead)),
      cursor_(db_->NewCursor()),
      normalise_(normalise) {
  for (cursor_->SeekToFirst(); cursor_->Valid(); cursor_->Next()) {
    keys_.emplace_back(cursor_->key());
  }
  if (keys_.empty()) throw Error(Status::InvalidArgument(db_->Name() + " holds no records"));
  cursor_->SeekToFirst();
  const std::string where = db_->Name() + " record '" + keys_[0] + "'";
  ParseRecord(cursor_->value(), where, &record_);
  if (record_.protos_size() == 0) {
    throw Error(Status::InvalidArgument(where + ": the record holds no tensors"));
  }
  for (int i = 0; i < record_.protos_size(); ++i) {
    tensors_.push_back(RecordTensorOf(record_.protos(i), where + " tensor " + std::to_string(i)));
  }
  for (const RecordTensor& t : tensors_) outputs_.push_back({t.dtype, t.dims});
  if (normalise_) {
    if (tensors_[0].dtype != DType::kUInt8) {
      throw Error(Status::InvalidArgument(
          db_->Name() + ": mean and std normalise uint8 images, but the records' first tensor " +
          "is " + tensors_[0].ToString()));
    }
    outputs_[0].dtype = DType::kFloat32;
    pixels_.resize(static_cast<size_t>(tensors_[0].bytes()));
  }
}

void DbExampleSource::Decode(int64_t example, const std::vector<uint8_t*>& slots) {
  const std::string& key = keys_[static_cast<size_t>(example)];
  const std::string where = db_->Name() + " record '" + key + "'";
  cursor_->Seek(key);
  if (!cursor_->Valid() || cursor_->key() != key) {
    throw Error(Status::NotFound(where + " vanished while the DB was read"));
  }
  ParseRecord(cursor_->value(), where, &record_);
  if (record_.protos_size() != static_cast<int>(tensors_.size())) {
    throw Error(Status::InvalidArgument(
        where + " holds " + std::to_string(record_.protos_size()) + " tensors, but the first " +
        "record holds " + std::to_string(tensors_.size())));
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const std::string tensor_where = where + " tensor " + std::to_string(i);
    const TensorProto& proto = record_.protos(static_cast<int>(i));
    const RecordTensor tensor = RecordTensorOf(proto, tensor_where);
    if (!(tensor == tensors_[i])) {
      throw Error(Status::InvalidArgument(tensor_where + " is " + tensor.ToString() +
                                          ", but the first record's is " +
                                          tensors_[i].ToString()));
    }
    if (i == 0 && normalise_) {
      CopyRecordValues(proto, tensor, pixels_.data(), tensor_where);
      normalise_->Apply(pixels_.data(), tensor.numel(), reinterpret_cast<float*>(slots[0]));
    } else {
      CopyRecordValues(proto, tensor, slots[i], tensor_where);
    }
  }
}

}  // namespace braid
