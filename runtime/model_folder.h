// A model folder in the layout of Caffe2's model zoo:
//
//   DIR/init_net.pb        binary NetDef that fills the weights (run once)
//   DIR/predict_net.pb     binary NetDef that computes the outputs from the input
//   DIR/value_info.json    the input's name, element type (TensorProto.DataType, 1 = FLOAT) and
//                          shape: {"data": [1, [1, 3, 224, 224]]}
//
// WriteModelFolder creates DIR when missing and writes the three files (each atomically,
// runtime/proto_io.h). It throws braid::Error (IoError) naming the file that could not be written.
//
// LoadModelFolder reads the three files back. value_info.json must hold exactly one input; its
// element type is one of Caffe2's TensorProto.DataType codes braid has (1 FLOAT, 2 INT32, 5 BOOL,
// 6 UINT8, 10 INT64, 13 DOUBLE). Errors come back as a Status naming the file: a missing file, a
// malformed NetDef, or value_info.json text that is not of the form above (with what was expected).
//
//   WriteModelFolder("resnet18", init, predict, "input", {1, 3, 224, 224});
//   ModelFolder model;
//   Status s = LoadModelFolder("resnet18", &model);
//   if (s.ok()) s = ws.RunNetOnce(model.init_net);  // then feed model.input_name, run predict_net
//
// Thread safety: the functions touch only the files they name; calls on distinct folders may run
// concurrently.
#ifndef BRAID_RUNTIME_MODEL_FOLDER_H_
#define BRAID_RUNTIME_MODEL_FOLDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/dtype.h"
#include "runtime/status.h"

namespace braid {

struct ModelFolder {
  NetDef init_net;
  NetDef predict_net;
  std::string input_name;
  DType input_dtype = DType::kFloat32;
  std::vector<int64_t> input_shape;
};

void WriteModelFolder(const std::string& dir, const NetDef& init_net, const NetDef& predict_net,
                      const std::string& input_name, const std::vector<int64_t>& input_shape);

// The value_info.json text for a float32 input.
std::string ValueInfoJson(const std::string& input_name, const std::vector<int64_t>& input_shape);

Status LoadModelFolder(const std::string& dir, ModelFolder* model);

// Parses value_info.json's text into model's input name, dtype and shape; `source` names the text
// in errors (a path, or "<string>").
Status ParseValueInfoJson(const std::string& text, const std::string& source, ModelFolder* model);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODEL_FOLDER_H_
