// External data of an ONNX model: tensors whose bytes lie in a file beside the model (ONNX's
// `data_location: EXTERNAL` with `location`, `offset`, `length`), as PyTorch 2.x's exporter writes
// them by default (model.onnx and model.onnx.data).
//
// LoadExternalData reads the bytes of each such initializer and Constant node `value` into its
// raw_data and marks it stored in the model, so the rest of the importer sees an ordinary model.
// `location` must be a relative path below the model's folder (no absolute path, no ".."
// component, no symbolic link among its components, a regular file at its end, and its canonical
// path under the folder's), as ONNX's external-data rules require. The data type must be one braid
// reads; exactly dims x element-size bytes are read from `offset`: `length`, when given, must equal
// them, and without it (ONNX: the data runs to the end of the file) the rest of the file must.
//
//   LoadExternalData(&model, "models/resnet18");   // reads models/resnet18/<location>
//
// Errors: braid::Error naming the model (`source`), the tensor and the file: InvalidArgument for a
// location, data type or range the rules refuse, NotFound for a missing file, IoError for a failed
// read.
// Thread safety: pure over its arguments.
#ifndef BRAID_RUNTIME_IO_ONNX_ONNX_EXTERNAL_DATA_H_
#define BRAID_RUNTIME_IO_ONNX_ONNX_EXTERNAL_DATA_H_

#include <string>

#include "onnx/onnx_pb.h"

namespace braid {

// Reads the external initializers and Constant values of `model` from files under `folder`
// ("" for the working folder); `source` names the model in errors.
void LoadExternalData(onnx::ModelProto* model, const std::string& folder,
                      const std::string& source);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_ONNX_ONNX_EXTERNAL_DATA_H_
