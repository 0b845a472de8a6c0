// External data of an ONNX model: initializers whose bytes lie in a file beside the model (ONNX's
// `data_location: EXTERNAL` with `location`, `offset`, `length`), as PyTorch 2.x's exporter writes
// them by default (model.onnx and model.onnx.data).
//
// LoadExternalData reads each such initializer's bytes into its raw_data and marks it stored in
// the model, so the rest of the importer sees an ordinary model. `location` must be a relative
// path below the model's folder (no absolute path, no ".." component), as ONNX's external-data
// rules require; offset and length, when given, must lie within the file.
//
//   LoadExternalData(&model, "models/resnet18");   // reads models/resnet18/<location>
//
// Errors: braid::Error naming the model (`source`), the tensor and the file: InvalidArgument for a
// location or a range the rules refuse, NotFound for a missing file, IoError for a failed read.
// Thread safety: pure over its arguments.
#ifndef BRAID_RUNTIME_IO_ONNX_ONNX_EXTERNAL_DATA_H_
#define BRAID_RUNTIME_IO_ONNX_ONNX_EXTERNAL_DATA_H_

#include <string>

#include "onnx/onnx_pb.h"

namespace braid {

// Reads the external initializers of `model` from files under `folder` ("" for the working
// folder); `source` names the model in errors.
void LoadExternalData(onnx::ModelProto* model, const std::string& folder,
                      const std::string& source);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_ONNX_ONNX_EXTERNAL_DATA_H_
