#include "runtime/io/checkpoint.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "braid/status.h"
#include "runtime/core/workspace.h"
#include "runtime/io/proto_io.h"

namespace braid {
namespace {

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void Fill(Workspace* ws, const std::string& name, std::vector<int64_t> shape, float value) {
  Tensor* t = ws->CreateBlob(name);
  t->Resize(DType::kFloat32, std::move(shape));
  float* data = t->mutable_data<float>();
  for (int64_t i = 0; i < t->numel(); ++i) data[i] = value;
}

float First(const Workspace& ws, const std::string& name) { return ws.GetBlob(name)->data<float>()[0]; }

std::string LoadError(const std::string& path, const std::vector<std::string>& blobs, Workspace* ws) {
  try {
    LoadCheckpoint(path, blobs, "m", ws);
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.what();
    return e.status().message();
  }
  ADD_FAILURE() << "LoadCheckpoint accepted " << path;
  return "";
}

TEST(CheckpointTest, RoundTripsEveryBlob) {
  Workspace saved;
  Fill(&saved, "w", {2, 3}, 1.5f);
  Fill(&saved, "b", {3}, -2.f);
  const std::string path = TempPath("ckpt_round_trip.pb");
  SaveCheckpoint(saved, {"w", "b"}, "m", path);
  Workspace loaded;
  Fill(&loaded, "w", {2, 3}, 0.f);
  Fill(&loaded, "b", {3}, 0.f);
  LoadCheckpoint(path, {"w", "b"}, "m", &loaded);
  EXPECT_EQ(First(loaded, "w"), 1.5f);
  EXPECT_EQ(First(loaded, "b"), -2.f);
}

// A mismatch at the second tensor used to leave the first one replaced.
TEST(CheckpointTest, AMismatchLeavesEveryBlobAsItWas) {
  Workspace saved;
  Fill(&saved, "a", {4}, 7.f);
  Fill(&saved, "b", {5}, 7.f);  // the model's b is [4]
  const std::string path = TempPath("ckpt_mismatch.pb");
  SaveCheckpoint(saved, {"a", "b"}, "m", path);
  Workspace ws;
  Fill(&ws, "a", {4}, 1.f);
  Fill(&ws, "b", {4}, 1.f);
  const std::string message = LoadError(path, {"a", "b"}, &ws);
  EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("tensor 'b'"), std::string::npos) << message;
  EXPECT_EQ(First(ws, "a"), 1.f);
  EXPECT_EQ(First(ws, "b"), 1.f);
}

// Dims whose count does not match the values, or overflows, are refused before any allocation.
TEST(CheckpointTest, DimsThatDoNotMatchTheValuesAreRefusedNamingTheTensor) {
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{3}, {1LL << 40, 1LL << 40}, {4611686018427387904LL, 4},
                                         {-1, -4}, {1LL << 60}}) {
    TensorProtos protos;
    TensorProto* model = protos.add_protos();
    model->set_name("__model__");
    model->set_data_type(TensorProto::STRING);
    model->add_string_data("m");
    TensorProto* w = protos.add_protos();
    w->set_name("w");
    w->set_data_type(TensorProto::FLOAT);
    for (int64_t d : dims) w->add_dims(d);
    for (int i = 0; i < 4; ++i) w->add_float_data(1.f);
    const std::string path = TempPath("ckpt_dims.pb");
    SaveProto(protos, path);
    Workspace ws;
    Fill(&ws, "w", {4}, 2.f);
    const std::string message = LoadError(path, {"w"}, &ws);
    EXPECT_NE(message.find("tensor 'w'"), std::string::npos) << message;
    EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
    EXPECT_EQ(First(ws, "w"), 2.f);
  }
}

// A checkpoint of the named tensor `w`, for the model "m", at `path`.
void SaveOne(const TensorProto& w, const std::string& path) {
  TensorProtos protos;
  TensorProto* model = protos.add_protos();
  model->set_name("__model__");
  model->set_data_type(TensorProto::STRING);
  model->add_string_data("m");
  *protos.add_protos() = w;
  SaveProto(protos, path);
}

// Tensors are read as Caffe2's DB records are: a uint8 held widened in int32_data must fit (300
// used to load as 44), and values in raw_data (little-endian bytes) load.
TEST(CheckpointTest, ValuesAreReadAsCaffe2RecordsAreAndMustFitTheirType) {
  TensorProto bytes;
  bytes.set_name("w");
  bytes.set_data_type(TensorProto::UINT8);
  bytes.add_dims(2);
  bytes.add_int32_data(7);
  bytes.add_int32_data(300);
  const std::string path = TempPath("ckpt_uint8.pb");
  SaveOne(bytes, path);
  Workspace ws;
  ws.CreateBlob("w");
  const std::string message = LoadError(path, {"w"}, &ws);
  EXPECT_NE(message.find("tensor 'w'"), std::string::npos) << message;
  EXPECT_NE(message.find("value 300 at 1 does not fit uint8"), std::string::npos) << message;

  TensorProto raw;
  raw.set_name("w");
  raw.set_data_type(TensorProto::FLOAT);
  raw.add_dims(2);
  const float values[2] = {1.25f, -3.f};
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  SaveOne(raw, path);
  Workspace loaded;
  Fill(&loaded, "w", {2}, 0.f);
  LoadCheckpoint(path, {"w"}, "m", &loaded);
  EXPECT_EQ(loaded.GetBlob("w")->data<float>()[1], -3.f);

  // A bool's byte must be 0 or 1; a tensor that fails to read is left as it was.
  TensorProto flags;
  flags.set_name("w");
  flags.set_data_type(TensorProto::BOOL);
  flags.add_dims(3);
  flags.set_raw_data(std::string("\x01\x02\x00", 3));
  Tensor kept(DType::kFloat32, {2});
  kept.mutable_data<float>()[0] = 5.f;
  try {
    FromTensorProto(flags, &kept);
    ADD_FAILURE() << "a bool byte of 2 was read";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("byte 2 at 1 in raw_data is not a bool"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(kept.dtype(), DType::kFloat32);
  EXPECT_EQ(kept.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(kept.data<float>()[0], 5.f);
}

}  // namespace
}  // namespace braid
