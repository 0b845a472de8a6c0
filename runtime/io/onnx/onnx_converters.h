// The node converters of the ONNX importer: one function per ONNX op type, which reads the current
// node of an ImportContext (runtime/io/onnx/onnx_import_context.h) and emits braid ops, fills
// weights, or records a constant, an alias or a pending pad. A converter calls ctx->Fail for a node
// it cannot import exactly (a broadcast Caffe2's rule cannot express, a non-constant shape, ...).
//
//   onnx_nn_converters.cc:     Conv, BatchNormalization, MaxPool, AveragePool, GlobalAveragePool,
//                              GlobalMaxPool, Gemm, MatMul
//   onnx_tensor_converters.cc: Relu, Clip, Add, Mul, Concat, Flatten, Reshape, Squeeze, Unsqueeze,
//                              Dropout, Identity, Softmax, Constant, Pad, Shape, Gather, Cast
//   onnx_reduce_converters.cc: ReduceMean, ReduceSum
//   onnx_split_resize_converters.cc: Split, Resize
//
// Converters see nodes in their form of opsets 9 to 17 (ctx->opset()): newer ones were lowered
// first (runtime/io/onnx/onnx_opset_lowering.h).
//
// Thread safety: NodeConverters' table is built once, on first use (a function-local static), and
// read-only after; a converter touches only the ImportContext it is given (one per import) and,
// through it, that import's init and predict nets.
#ifndef BRAID_RUNTIME_IO_ONNX_ONNX_CONVERTERS_H_
#define BRAID_RUNTIME_IO_ONNX_ONNX_CONVERTERS_H_

#include <map>
#include <string>

#include "runtime/io/onnx/onnx_import_context.h"

namespace braid {

using NodeConverter = void (*)(ImportContext* ctx);
using ConverterTable = std::map<std::string, NodeConverter>;

void AddNnConverters(ConverterTable* table);
void AddTensorConverters(ConverterTable* table);
void AddReduceConverters(ConverterTable* table);
void AddSplitResizeConverters(ConverterTable* table);

// Identity and inference-mode Dropout: the output stands for the input (a Copy for a graph output).
void ConvertPassThrough(ImportContext* ctx);

// Every supported ONNX op type (default domain) and its converter.
const ConverterTable& NodeConverters();

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_ONNX_ONNX_CONVERTERS_H_
