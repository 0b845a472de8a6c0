// A model folder in the layout of Caffe2's model zoo:
//
//   DIR/init_net.pb        binary NetDef that fills the weights (run once)
//   DIR/predict_net.pb     binary NetDef that computes the outputs from the inputs
//   DIR/value_info.json    each input's name, element type (TensorProto.DataType, 1 = FLOAT) and
//                          shape, in the order the model takes them:
//                          {"data": [1, [1, 3, 224, 224]], "im_info": [1, [1, 3]]}
//
// WriteModelFolder creates DIR when missing and writes the three files (each atomically,
// runtime/io/proto_io.h); IoError naming the file that could not be written.
//
// LoadModelFolder reads the three files back. value_info.json must hold at least one input; each
// element type is one of Caffe2's TensorProto.DataType codes braid has (1 FLOAT, 2 INT32, 5 BOOL,
// 6 UINT8, 10 INT64, 13 DOUBLE). Errors come back as a Status naming the file: a missing file, a
// malformed NetDef, or value_info.json text that is not of the form above (with what was expected).
//
//   Status s = WriteModelFolder("resnet18", {init, predict, {{"data", DType::kFloat32, {1, 3}}}});
//   ModelFolder model;
//   if (s.ok()) s = LoadModelFolder("resnet18", &model);
//   if (s.ok()) s = RunInitNet(std::move(model.init_net), &ws);  // runtime/exec/init_net.h
//   // then feed model.inputs and run model.predict_net
//
// Thread safety: the functions touch only the files they name; calls on distinct folders may run
// concurrently.
#ifndef BRAID_RUNTIME_IO_MODEL_FOLDER_H_
#define BRAID_RUNTIME_IO_MODEL_FOLDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "braid/model_io.h"
#include "braid/status.h"
#include "proto/braid.pb.h"

namespace braid {

// ValueInfo, ModelFolder, LoadModelFolder and WriteModelFolder are public: <braid/model_io.h>.

// value_info.json's text for `inputs`.
std::string ValueInfoJson(const std::vector<ValueInfo>& inputs);

// Parses value_info.json's text into `inputs`; `source` names the text in errors (a path, or
// "<string>").
Status ParseValueInfoJson(const std::string& text, const std::string& source,
                          std::vector<ValueInfo>* inputs);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_MODEL_FOLDER_H_
