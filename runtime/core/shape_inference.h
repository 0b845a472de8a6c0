// Shape inference over a whole net, from the op schemas' TensorInference functions.
//
// Walks the ops in listed order, starting from the shapes of the blobs the net reads first
// (external inputs, parameters), and returns every blob's type and shape as last written. Blobs
// whose shape cannot be inferred come back with known = false. The memory planner sizes blobs
// with this; where it is unknown, the runtime measures one run instead.
//
//   std::map<std::string, ShapeInfo> shapes = InferBlobShapes(net, ShapesOfWorkspaceBlobs(net,
//   ws));
//
// Throws braid::Error naming the net, the op and the shapes when an op's inputs are inconsistent.
//
// Thread safety: InferBlobShapes is a pure function of the net and the shapes given (the op
// schemas are read-only after static initialisation); ShapesOfWorkspaceBlobs reads the
// workspace's tensors: not while a net writes them.
#ifndef BRAID_RUNTIME_CORE_SHAPE_INFERENCE_H_
#define BRAID_RUNTIME_CORE_SHAPE_INFERENCE_H_

#include <cstdint>
#include <map>
#include <string>

#include "proto/braid.pb.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/tensor.h"

namespace braid {

class Workspace;

std::map<std::string, ShapeInfo> InferBlobShapes(const NetDef& net,
                                                 std::map<std::string, ShapeInfo> known);
// Bytes of every blob `net` writes, the largest over all its writes (what memory planning must
// reserve); blobs with a write of unknown shape are left out.
std::map<std::string, int64_t> LargestWrittenBytes(const NetDef& net,
                                                   std::map<std::string, ShapeInfo> known);
// The shapes of the workspace blobs that `net` reads (known only for blobs that hold data).
std::map<std::string, ShapeInfo> ShapesOfWorkspaceBlobs(const NetDef& net, const Workspace& ws);
ShapeInfo ShapeOf(const Tensor& tensor);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_SHAPE_INFERENCE_H_
