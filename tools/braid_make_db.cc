// braid_make_db: writes a DB of TensorProtos records (Caffe2's layout, read by TensorProtosDBInput,
// ops/data/tensor_protos_db_input_op.h) from IDX files or .npy files.
//
//   braid_make_db --images train-images-idx3-ubyte.gz --labels train-labels-idx1-ubyte.gz
//                 --out /tmp/train_lmdb
//   braid_make_db --npy images.npy,labels.npy --out /tmp/train_lmdb
//
// IDX (gzip or raw; runtime/io/idx_file.h): record i holds image i as a BYTE TensorProto of dims
// [C, H, W] (C = 1 for [N, H, W] files) in byte_data, and label i as an INT32 scalar, as Caffe2's
// make_mnist_db writes them. .npy (runtime/io/npy_file.h): every file is an array [N, ...] of the
// same N, and record i holds slice i of each, in the files' order and element type (uint8 as
// BYTE, the others in their typed field). Keys are the record index as 8 digits ("00000042"), so
// key order is file order. Records are committed every --commit-every puts.
//
// Prints one line: "wrote 60000 records (uint8[1,28,28], int32[]) to lmdb '/tmp/train_lmdb'".
// Exit codes: 0 success, 1 a failure (its Status on one stderr line: the file or DB and what is
// wrong; a DB path that exists is refused), 2 bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "braid/status.h"
#include "proto/braid.pb.h"
#include "runtime/core/dims_text.h"
#include "runtime/core/tensor.h"
#include "runtime/io/db.h"
#include "runtime/io/idx_file.h"
#include "runtime/io/npy_file.h"
#include "runtime/io/tensor_protos_record.h"
#include "tools/command_line.h"

DEFINE_string(images, "", "IDX images file ([N,H,W] or [N,C,H,W] unsigned bytes; gzip or raw)");
DEFINE_string(labels, "", "IDX labels file ([N] unsigned bytes), with --images");
DEFINE_string(npy, "", ".npy files separated by commas, each [N, ...]: one tensor per record each");
DEFINE_string(out, "", "the DB to write (a path that does not exist yet)");
DEFINE_string(db_type, "lmdb", "the DB's type (lmdb)");
DEFINE_int64(commit_every, 1000, "records per transaction");
DEFINE_int64(limit, 0, "> 0: only the first this many examples");

namespace braid {
namespace {

[[noreturn]] void ExitBadFlags(const std::string& message) {
  std::cerr << "braid_make_db: " << message << "\n" << gflags::ProgramUsage() << "\n";
  std::exit(kExitBadFlags);
}

// Writes records 0..count-1, each made by `fill`, and reports what the first held.
void WriteDb(int64_t count, const std::function<void(int64_t, TensorProtos*)>& fill) {
  if (FLAGS_limit > 0 && FLAGS_limit < count) count = FLAGS_limit;
  std::unique_ptr<Db> db = OpenDb(FLAGS_db_type, FLAGS_out, DbMode::kNew);
  std::unique_ptr<DbTransaction> txn = db->NewTransaction();
  TensorProtos record;
  std::string bytes, layout;
  char key[32];
  for (int64_t i = 0; i < count; ++i) {
    record.Clear();
    fill(i, &record);
    if (i == 0) {
      for (const TensorProto& t : record.protos()) {
        layout += (layout.empty() ? "" : ", ") + RecordTensorOf(t, "record 0").ToString();
      }
    }
    std::snprintf(key, sizeof(key), "%08lld", static_cast<long long>(i));
    record.SerializeToString(&bytes);
    txn->Put(key, bytes);
    if ((i + 1) % FLAGS_commit_every == 0) txn->Commit();
  }
  txn->Commit();
  std::cout << "wrote " << count << " records (" << layout << ") to " << db->Name() << "\n";
}

void FromIdx() {
  const IdxFile images = IdxFile::Load(FLAGS_images);
  const IdxFile labels = IdxFile::Load(FLAGS_labels);
  if (images.ndim() != 3 && images.ndim() != 4) {
    throw Error(Status::InvalidArgument("IDX file '" + FLAGS_images + "': images must be " +
                                        "[N,H,W] or [N,C,H,W], got " + DimsText(images.dims())));
  }
  if (labels.ndim() != 1 || labels.dim(0) != images.dim(0)) {
    throw Error(Status::InvalidArgument("IDX file '" + FLAGS_labels + "': labels must be [N] " +
                                        "with the images' N (" + std::to_string(images.dim(0)) +
                                        "), got " + DimsText(labels.dims())));
  }
  const std::vector<int64_t> dims = {images.ndim() == 4 ? images.dim(1) : 1,
                                     images.dim(images.ndim() - 2), images.dim(images.ndim() - 1)};
  const int64_t size = dims[0] * dims[1] * dims[2];
  WriteDb(images.dim(0), [&](int64_t i, TensorProtos* record) {
    TensorProto* image = record->add_protos();
    image->set_data_type(TensorProto::BYTE);
    for (int64_t d : dims) image->add_dims(d);
    image->set_byte_data(images.bytes().data() + i * size, static_cast<size_t>(size));
    TensorProto* label = record->add_protos();
    label->set_data_type(TensorProto::INT32);
    label->add_int32_data(labels.bytes()[i]);
  });
}

// Slice i of `array` ([N, ...]) as a TensorProto.
void AddSlice(const Tensor& array, int64_t i, TensorProtos* record) {
  TensorProto* t = record->add_protos();
  int64_t n = 1;
  for (size_t d = 1; d < array.shape().size(); ++d) {
    t->add_dims(array.shape()[d]);
    n *= array.shape()[d];
  }
  const auto slice = [&](auto* typed) { return typed + i * n; };
  switch (array.dtype()) {
    case DType::kFloat32:
      t->set_data_type(TensorProto::FLOAT);
      t->mutable_float_data()->Add(slice(array.data<float>()), slice(array.data<float>()) + n);
      break;
    case DType::kFloat64:
      t->set_data_type(TensorProto::DOUBLE);
      t->mutable_double_data()->Add(slice(array.data<double>()), slice(array.data<double>()) + n);
      break;
    case DType::kInt32:
      t->set_data_type(TensorProto::INT32);
      t->mutable_int32_data()->Add(slice(array.data<int32_t>()), slice(array.data<int32_t>()) + n);
      break;
    case DType::kInt64:
      t->set_data_type(TensorProto::INT64);
      t->mutable_int64_data()->Add(slice(array.data<int64_t>()), slice(array.data<int64_t>()) + n);
      break;
    case DType::kUInt8:
      t->set_data_type(TensorProto::BYTE);
      t->set_byte_data(slice(array.data<uint8_t>()), static_cast<size_t>(n));
      break;
    case DType::kBool:
      t->set_data_type(TensorProto::BOOL);
      for (int64_t k = 0; k < n; ++k) t->add_int32_data(slice(array.data<bool>())[k] ? 1 : 0);
      break;
    case DType::kFloat16:  // Caffe2's: each element's bits in int32_data
      t->set_data_type(TensorProto::FLOAT16);
      for (int64_t k = 0; k < n; ++k) t->add_int32_data(slice(array.data<Float16>())[k].bits());
      break;
  }
}

void FromNpy() {
  std::vector<std::string> paths;
  std::stringstream list(FLAGS_npy);
  for (std::string path; std::getline(list, path, ',');) {
    if (!path.empty()) paths.push_back(path);
  }
  if (paths.empty()) {
    throw Error(Status::InvalidArgument("braid_make_db: --npy '" + FLAGS_npy +
                                        "' names no file (FILE.npy[,FILE.npy...])"));
  }
  std::vector<Tensor> arrays(paths.size());
  for (size_t f = 0; f < paths.size(); ++f) {
    const Status read = ReadNpyFile(paths[f], &arrays[f]);
    if (!read.ok()) throw Error(read);
    if (arrays[f].shape().empty() || arrays[f].shape()[0] != arrays[0].shape()[0]) {
      throw Error(Status::InvalidArgument(
          ".npy file '" + paths[f] + "' holds " + arrays[f].ShapeString() + ", not an array [N, " +
          "...] with the N of '" + paths[0] + "' (" + arrays[0].ShapeString() + ")"));
    }
  }
  WriteDb(arrays[0].shape()[0], [&](int64_t i, TensorProtos* record) {
    for (const Tensor& array : arrays) AddSlice(array, i, record);
  });
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const std::vector<std::string> rest = braid::ParseCommandLine(
      argc, argv,
      "braid_make_db (--images IDX --labels IDX | --npy A.npy,B.npy,...) --out DB "
      "[--db-type lmdb] [--commit-every 1000] [--limit N]");
  if (!rest.empty()) braid::ExitBadFlags("unexpected argument '" + rest[0] + "'");
  if (FLAGS_out.empty()) braid::ExitBadFlags("--out DB is required");
  const bool idx = !FLAGS_images.empty() || !FLAGS_labels.empty();
  if (idx == !FLAGS_npy.empty()) {
    braid::ExitBadFlags("give either --images and --labels (IDX files) or --npy (.npy files)");
  }
  if (idx && (FLAGS_images.empty() || FLAGS_labels.empty())) {
    braid::ExitBadFlags("--images and --labels go together");
  }
  if (FLAGS_commit_every <= 0) braid::ExitBadFlags("--commit-every must be positive");
  return braid::RunTool("braid_make_db", [&] { idx ? braid::FromIdx() : braid::FromNpy(); });
}
