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
//   WriteModelFolder("resnet18", init, predict, "input", {1, 3, 224, 224});
#ifndef BRAID_RUNTIME_MODEL_FOLDER_H_
#define BRAID_RUNTIME_MODEL_FOLDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

void WriteModelFolder(const std::string& dir, const NetDef& init_net, const NetDef& predict_net,
                      const std::string& input_name, const std::vector<int64_t>& input_shape);

// The value_info.json text for a float32 input.
std::string ValueInfoJson(const std::string& input_name, const std::vector<int64_t>& input_shape);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODEL_FOLDER_H_
