// ONNX import: an ONNX model (opsets 9 to 21, the protobuf of Debian's libonnx-dev) becomes an init
// net holding its weights and a predict net of braid's Caffe2 ops, as in Caffe2's model zoo.
//
// The importer covers what torchvision's classification models export to, with PyTorch 1.x's
// exporter (opset 13) or 2.x's (opset 18 and newer): Conv, BatchNormalization, Relu, Clip,
// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, Add, Mul, Concat, Gemm, MatMul (constant
// 2-D weight), Flatten, Reshape (constant shape), Squeeze and Unsqueeze, Dropout, Identity,
// Softmax, Constant, Pad (constant zero padding of H and W, folded into the Conv or AveragePool
// that reads it), ReduceMean and ReduceSum (constant axes), Split, Resize (nearest, asymmetric,
// floor: PyTorch's nearest upsampling), and Shape/Gather/Unsqueeze/Concat/Cast chains over
// constants, folded at import. A model of opset 18 to 21 is first lowered to opset 17's forms
// (runtime/io/onnx/onnx_opset_lowering.h says which changes are handled and which refused). The
// input's shape is made static first (symbolic dims become 1, or ImportOptions.input_shape) and
// ONNX's shape inference gives every value a shape, so the folds and the broadcasts see real dims.
//
// The init net fills every weight with GivenTensorFill (float32) or GivenTensorInt64Fill (int64),
// with `shape` and `values` arguments. The predict net lists the input and the weights as external
// inputs and the graph's outputs as external outputs; blobs keep ONNX's value names.
//
// Errors come back as a Status naming the model (`source`), the node (index, op type, name) and
// what was expected. Every op type the importer does not know is listed in one error, with counts:
//   "resnet.onnx: unsupported ONNX ops: LSTM x2, Einsum x1"
//
//   ModelFolder model;  // runtime/io/model_folder.h: the nets and the one input (float32)
//   Status s = ImportOnnxFile("resnet18.onnx", {}, &model);
//   if (s.ok()) s = RunInitNet(std::move(model.init_net), &ws);  // runtime/exec/init_net.h  // then feed model.inputs[0], run predict_net
//
// Thread safety: the functions are pure; calls may run concurrently.
#ifndef BRAID_RUNTIME_IO_ONNX_ONNX_IMPORT_H_
#define BRAID_RUNTIME_IO_ONNX_ONNX_IMPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "braid/model_io.h"
#include "braid/status.h"
#include "proto/braid.pb.h"
#include "runtime/io/model_folder.h"

namespace braid {

// OnnxImportOptions, ImportOnnxFile and ImportOnnxBytes are public (<braid/model_io.h>);
// ImportOnnxFile reads initializers and Constant values stored in external files (PyTorch 2.x's
// model.onnx.data) from beside the model (onnx_external_data.h states the rules).

// True for a file name ending in ".onnx" (what braid_run imports instead of reading a NetDef).
bool IsOnnxPath(const std::string& path);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_ONNX_ONNX_IMPORT_H_
