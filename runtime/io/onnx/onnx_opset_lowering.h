// Lowering of ONNX opsets 18 to 21 to opset 17, before ONNX's shape inference.
//
// Debian's libonnx (1.12) knows the operator schemas up to opset 17. Its shape inference picks,
// for a node of opset 18 or newer, the newest schema it knows, so a ReduceMean-18 with its axes as
// an input would be inferred as a ReduceMean-13 over every axis: wrong shapes, silently. So a model
// of opset 18 to 21 is first rewritten node by node into the opset-17 form of each op braid
// imports, and its default-domain import set to 17; the converters then see only forms they know.
//
// What changed from 18 to 21 in the ops braid imports, and what lowering does with it:
//   ReduceMean (18)   `axes` moves from an attribute to an optional input (a constant here), and
//                     noop_with_empty_axes arrives: back to the attribute; no axes with
//                     noop_with_empty_axes=1 becomes an Identity. (ReduceSum has had the input
//                     form since 13 and is left alone.)
//   Split (18)        num_outputs: checked against the outputs and kept; the converter cuts
//                     parts of ceil(dim / n), the last smaller, from the inferred input shape.
//   Pad (18, 19)      the optional `axes` input: pads widened to every axis (zeros elsewhere).
//                     Mode "wrap" (19) is left to the converter, which refuses every mode but
//                     "constant".
//   Resize (18, 19)   antialias=1 is refused; keep_aspect_ratio_policy other than "stretch" is
//                     refused with `sizes` (it does not apply to `scales`); `axes` is widened into
//                     full-rank scales (refused with `sizes`); "half_pixel_symmetric" (19) is
//                     refused. The converter imports only nearest/asymmetric/floor anyway.
//   Cast (19)         `saturate` applies to float8 targets only, which braid refuses: dropped.
//   AveragePool (19)  `dilations`: left to the converter, which refuses any other than 1.
//   Cast, Constant, Flatten, Identity, Pad, Reshape, Shape, Squeeze, Unsqueeze (19, 21): new
//                     element types only (float8, int4, uint4); kept, and refused where a value of
//                     such a type is read (constants: onnx_constants.h; Cast: its converter).
// The other ops braid imports did not change between opsets 17 and 21.
//
// Errors: braid::Error (InvalidArgument) naming the model, the node (index, op type, name), the
// opset and the attribute or input, e.g.
//   "m.onnx: node #4 (ReduceMean 'mean'): opset 18: input 1 'axes' ('a') must be a constant"
//
//   if (opset > kLoweredOpset) LowerToOpset17(&model, opset, source);
//
// Thread safety: pure over its arguments; calls on different models may run concurrently.
#ifndef BRAID_RUNTIME_IO_ONNX_ONNX_OPSET_LOWERING_H_
#define BRAID_RUNTIME_IO_ONNX_ONNX_OPSET_LOWERING_H_

#include <cstdint>
#include <string>

#include "onnx/onnx_pb.h"

namespace braid {

// The newest opset Debian's libonnx knows, and so the form every node has after lowering.
inline constexpr int64_t kLoweredOpset = 17;

// Rewrites the default-domain nodes of `model`, whose default-domain opset is `opset` (18 to 21),
// into their opset-17 form and sets that import to 17. `source` names the model in errors.
void LowerToOpset17(onnx::ModelProto* model, int64_t opset, const std::string& source);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_ONNX_ONNX_OPSET_LOWERING_H_
