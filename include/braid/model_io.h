// braid's public API for models and arrays on disk (installed as <braid/model_io.h>): Caffe2
// model-zoo folders, ONNX import and NumPy .npy files.
//
//   braid::ModelFolder model;
//   braid::Status s = braid::ImportOnnxFile("resnet18.onnx", {}, &model);  // opsets 9 to 21
//   if (s.ok()) s = braid::WriteModelFolder("resnet18", model);  // init_net.pb, predict_net.pb,
//   if (s.ok()) s = braid::LoadModelFolder("resnet18", &model);  // value_info.json
//   braid::NpyArray image;
//   if (s.ok()) s = braid::ReadNpyFile("image.npy", &image);
//   if (s.ok()) s = braid::WriteNpyFile("copy.npy", image);
//   if (!s.ok()) std::cerr << s.ToString() << "\n";
//
// A model folder is the layout of Caffe2's model zoo: init_net.pb (a binary NetDef that fills the
// weights), predict_net.pb (the NetDef from the inputs to the outputs) and value_info.json (each
// input's name, TensorProto.DataType code and shape: {"data": [1, [1, 3, 224, 224]]}). The
// Predictor serves one (<braid/predictor.h>), or an ONNX file directly.
//
// ONNX import turns a model of opset 9 to 21 (PyTorch 1.x's and 2.x's exporters, weights inline
// or in a side file such as model.onnx.data) into such nets: the init net of GivenTensorFills, the
// predict net of braid's Caffe2 ops; README "ONNX models" lists the ops covered.
//
// .npy files: C-order little-endian float32, float64, float16, int32, int64, uint8 and bool arrays.
//
// Errors come back as a Status naming the file and what was wrong with it (a missing file, a
// malformed NetDef or value_info.json, an unsupported ONNX op with the node that uses it, an npy
// dtype braid lacks); nothing throws across this API. Writes are atomic: a reader sees the old
// file or all of the new one. Thread safety: the functions touch only the files they name; calls
// may run concurrently.
#ifndef BRAID_MODEL_IO_H_
#define BRAID_MODEL_IO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "braid/braid.pb.h"
#include "braid/dtype.h"
#include "braid/status.h"

namespace braid {

// One input of a model: what value_info.json says of it.
struct ValueInfo {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
};

struct ModelFolder {
  NetDef init_net;
  NetDef predict_net;
  std::vector<ValueInfo> inputs;  // value_info.json's order

  // The input called `name`, or nullptr.
  const ValueInfo* FindInput(const std::string& name) const;
};

// Reads DIR/init_net.pb, DIR/predict_net.pb and DIR/value_info.json (at least one input; element
// types 1 FLOAT, 2 INT32, 5 BOOL, 6 UINT8, 10 INT64, 13 DOUBLE).
Status LoadModelFolder(const std::string& dir, ModelFolder* model);
// Creates DIR when missing and writes the three files.
Status WriteModelFolder(const std::string& dir, const ModelFolder& model);

struct OnnxImportOptions {
  // The input's shape; empty: the model's, with symbolic or unknown dims set to 1.
  std::vector<int64_t> input_shape;
  // Name of both nets' NetDef.name prefix: "<net_name>_init" and "<net_name>".
  std::string net_name = "onnx";
};

// Reads the ONNX ModelProto at `path` (binary) and imports it; initializers and Constant values
// stored in external files are read from beside it: a relative location below the model's folder,
// no symbolic link on the way, exactly the bytes the tensor's dims need (InvalidArgument else).
Status ImportOnnxFile(const std::string& path, const OnnxImportOptions& options,
                      ModelFolder* model);
// Imports a serialized ModelProto; `source` names it in errors (a path, or "<bytes>").
// Initializers stored in external files are refused: bytes have no folder to find them in.
Status ImportOnnxBytes(const std::string& bytes, const std::string& source,
                       const OnnxImportOptions& options, ModelFolder* model);

// An array of a .npy file, in host memory.
struct NpyArray {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // the elements, C order

  int64_t numel() const;
  // The elements as T; nullptr when the array holds another dtype.
  template <typename T>
  const T* data() const {
    return DTypeOf<T>() == dtype ? reinterpret_cast<const T*>(bytes.data()) : nullptr;
  }
};

Status ReadNpyFile(const std::string& path, NpyArray* array);
// InvalidArgument when bytes.size() is not shape's element count times dtype's size.
Status WriteNpyFile(const std::string& path, const NpyArray& array);

}  // namespace braid

#endif  // BRAID_MODEL_IO_H_
