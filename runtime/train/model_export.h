// ExportedModel: what a TrainingLoop has trained, as a Caffe2 model-zoo folder's nets
// (runtime/io/model_folder.h) that Predictor::FromModelFolder and braid_run --model-dir serve.
//
//   predict_net  the model's forward pass for inference (is_test=1 where an op takes it: SpatialBN
//                uses its running statistics, Dropout passes through), from the input "data"
//                (float32 [N, channels, height, width], normalised as the trainer's reader
//                normalises) to the logits, then Softmax -> "softmax" (the external output); no
//                device options (a Predictor places it), plain layouts, no reader, loss or
//                accuracy. Its name is the model's.
//   init_net     one GivenTensorFill (GivenTensorIntFill, GivenTensorInt64Fill for integer
//                blobs) per parameter the predict net reads, holding its value now on the first
//                device (data parallel replicas hold the same values; batch-norm statistics are
//                device 0's, as the trainer's test net reads them).
//   inputs       "data", float32 [1, channels, height, width]; other batch sizes run too.
//
// The predict net runs the very ops of the trainer's test net, so it answers as that net does for
// the same images (bit for bit on a cpu device when the Predictor does not rewrite the graph:
// PredictorOptions::optimize_graph = false; with it, BatchNorm is folded into the convolutions and
// the answers change by rounding).
//
//   Status s = WriteModelFolder("out/resnet20", ExportedModel(loop));
//
// Throws braid::Error naming the parameter when one is missing from the workspace or holds a type
// a GivenTensor*Fill cannot (every parameter the trainer makes is float32). Thread safety: reads
// the loop's workspace: not while the loop runs.
#ifndef BRAID_RUNTIME_TRAIN_MODEL_EXPORT_H_
#define BRAID_RUNTIME_TRAIN_MODEL_EXPORT_H_

#include "runtime/io/model_folder.h"
#include "runtime/train/training_loop.h"

namespace braid {

ModelFolder ExportedModel(const TrainingLoop& loop);

}  // namespace braid

#endif  // BRAID_RUNTIME_TRAIN_MODEL_EXPORT_H_
