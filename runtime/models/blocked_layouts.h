// UseBlockedLayouts: keeps the activations that pass between oneDNN ops in oneDNN's own layout.
// oneDNN's convolution, batch norm and pooling kernels work on channel-blocked activations: nChw16c
// on AVX-512, nChw8c on AVX2 (Layout::kBlocked16 / kBlocked8, runtime/core/tensor.h); given plain
// NCHW tensors they reorder every input in and every output out, so each conv/BN layer of a ResNet
// reorders about 8 times per training step (forward and backward, data and gradients). When the
// writer of a blob and all its readers take the blocked layout, none of those reorders is needed.
//
// The block is the one the net's ops ask for (OpSchema::LayoutPorts::channel_block: the nn ops ask
// for the block of this machine's oneDNN convolutions); an op whose kernels work on another block
// keeps its blobs plain, and where no op asks for one nothing is blocked. The pass decides which
// blobs stay blocked between ops and records it in the producing ops' kBlockedOutputsArg
// ("blocked_outputs") and kChannelBlockArg ("channel_block", runtime/core/op_schema.h). A blob is
// blocked when:
//   - its shape (InferBlobShapes from `known`, as last written) is BlockableShape: float32 NCHW
//     with C a multiple of the block;
//   - it is neither an external input nor an external output (callers feed and fetch plain data),
//     and some op of the net writes it;
//   - every op reading or writing it does so at one of its schema's BlockedPortsOf positions (an
//     op without a schema, or a blob used at another position, e.g. as a filter, keeps it plain);
//   - for elementwise ops (OpSchema::layout_follows_inputs: Relu, Sum, Copy, ...), whose inputs
//     and outputs share one layout, the same holds for every blob connected to it through them.
// Every non-elementwise op's blocked_outputs is rewritten to list exactly its blocked outputs, with
// channel_block beside it (both removed when none); elementwise ops get none. Control inputs are
// ordering only and ignored.
//
//   Conv(data, w) -> x; SpatialBN(x, ...) -> y; Relu(y) -> r; Conv(r, w2) -> out (external output)
//   => x, y and r are blocked: the first Conv and the SpatialBN get blocked_outputs: [0] and
//      channel_block: 16 (on AVX-512; 8 on AVX2).
//
// Apply it to the final net, after RecomputeInBackward (runtime/models/recompute.h) and after
// the gradient and optimizer ops are added:
//
//   TrainingNets nets = BuildTrainingNets(spec);
//   UseBlockedLayouts(&nets.train, InferBlobShapes(nets.params.init_net, {}));
//
// Blobs read from outside the net (another net, a caller's fetch) must be external outputs, or
// they may be blocked, which Tensor::data() refuses to read. Returns the number of blobs made
// blocked. Throws braid::Error (from shape inference) when the net's shapes are inconsistent.
// Thread safety: a pure function of the NetDef and `known`.
#ifndef BRAID_RUNTIME_MODELS_BLOCKED_LAYOUTS_H_
#define BRAID_RUNTIME_MODELS_BLOCKED_LAYOUTS_H_

#include <map>
#include <string>

#include "proto/braid.pb.h"
#include "runtime/core/op_schema.h"

namespace braid {

// `known`: shapes of the blobs the net reads before writing (external inputs, parameters).
int UseBlockedLayouts(NetDef* net, const std::map<std::string, ShapeInfo>& known);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_BLOCKED_LAYOUTS_H_
