// Checkpoints: named workspace blobs saved as one TensorProtos file and loaded back.
//
// A checkpoint holds one TensorProto per blob (name, dims, data_type and the values in the typed
// field Caffe2 uses: float_data, int32_data, int64_data, double_data) plus a "__model__" entry
// (STRING) naming the model it was written for. SaveCheckpoint writes atomically (braid::SaveProto:
// a temporary file beside the path, then rename), so a crash never leaves a half-written file;
// ".pb" paths are binary, others text. LoadCheckpoint copies every tensor into the existing blob of
// the same name and refuses, naming the file and the blob, a checkpoint of another model, a
// missing or extra blob, dims that do not match the values, values that do not fit the type (a
// uint8 of 300), or a type or shape that differs from the workspace's. Tensors are read as DB
// records are (runtime/io/tensor_protos_record.h), so raw_data and byte_data are read too. A bad
// file changes nothing: every tensor is read and checked (into host memory, one model's size)
// before any blob changes; only a device failure while copying them in (out of memory) can leave
// some blobs loaded. A tensor of more than 2^31-1 elements cannot be saved.
//
//   SaveCheckpoint(ws, nets.CheckpointBlobs(), "resnet20", "/tmp/run.pb");
//   LoadCheckpoint("/tmp/run.pb", nets.CheckpointBlobs(), "resnet20", &ws);   // after the init net
//
// Thread safety: neither function may overlap a net run that writes the blobs.
#ifndef BRAID_RUNTIME_IO_CHECKPOINT_H_
#define BRAID_RUNTIME_IO_CHECKPOINT_H_

#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/core/workspace.h"

namespace braid {

// Throws braid::Error (NotFound) when a blob is missing or was never written.
void SaveCheckpoint(const Workspace& ws, const std::vector<std::string>& blobs,
                    const std::string& model, const std::string& path);
void LoadCheckpoint(const std::string& path, const std::vector<std::string>& blobs,
                    const std::string& model, Workspace* ws);

// A host tensor as a TensorProto named `name`, and back (the tensor takes its type and shape).
TensorProto ToTensorProto(const std::string& name, const Tensor& tensor);
void FromTensorProto(const TensorProto& proto, Tensor* tensor);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_CHECKPOINT_H_
