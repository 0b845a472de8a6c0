// RecomputeInBackward: trades a little arithmetic for memory in a training net (what MXNet calls
// mirroring, and checkpointing where whole layers are recomputed). Two kinds of recomputation:
//
// SpatialBN + Relu (RecomputeOptions::bn_relu). A training net keeps every activation its
// backward ops read alive from the forward pass to the backward pass; for a conv -> SpatialBN ->
// Relu layer that is both the BN's input X (for the BN gradient) and the Relu's output R (for the
// Relu gradient and the next conv's gradient). R is cheap to compute again from X and the BN's
// saved batch statistics, so:
//
//   forward:  X -> SpatialBN (training) -> Y [-> Sum with a residual S] -> Relu -> R -> ...
//   backward: R_recomputed = SpatialBNApply(X, scale, bias, saved_mean, saved_inv_var [, S],
//             relu=1), inserted just before the first backward op that reads R; every backward
//             reader of R reads R_recomputed instead. Its control input is a gradient that
//             reader reads, so the dag executor cannot run it earlier (its data inputs exist from
//             the forward pass on) and the planner sees R_recomputed born late for every schedule.
//
// R then dies at its last forward reader, and the memory planner (runtime/exec/memory_planning.h)
// reuses its storage; each R_recomputed lives from its recomputation to its last backward reader.
// The Sum form covers a ResNet block's output (bn3 + shortcut, Relu). Patterns are rewritten last
// first, so when block k's recomputation reads block k-1's output as its residual, block k-1's
// output is recomputed too (just before), and a stage's block outputs are all recomputed from its
// first block's at the start of the stage's backward pass. (What that saves on ResNet-50, and what
// it costs: README, "Measurements behind the design".)
//
// A pattern is rewritten only when the result is the same computation and saves memory: the
// first backward reader reads a gradient (for the control input), the BN is not in place (X
// survives it), each of Y and the Sum's output is used by the next op of the pattern alone (or in
// place), nothing else writes R, and no op between the BN and the insertion point writes X,
// scale, bias, the saved statistics or S. (So a projection shortcut computed after the BN is left
// alone, which loses nothing: recomputing would keep the shortcut's output alive instead of the
// block's, the same bytes.) The recomputed R matches the forward's to within a few float32
// roundings (oneDNN orders its arithmetic its own way). Names R + "_recomputed" (made unique).
//
// Convolutions (RecomputeOptions::conv_outputs). What is left after the above is mostly the
// convolutions' outputs X, kept from the forward pass for the batch norms' gradients. A chosen
// forward Conv (X = Conv(R, W [, b])) is run again in the backward pass, just before the first
// backward op that reads X, writing X_recomputed, which every backward reader of X reads instead
// (control input: a gradient that first reader reads, as above); X then dies in the forward pass.
// Both kinds are rewritten in one pass, last op first, so that a recomputed Conv's input R, itself
// a recomputed Relu output, is recomputed just before that Conv (its first backward reader now):
// a ResNet bottleneck's 4x-wide expansion output is rebuilt from the block's middle BN input, the
// only activation its backward then keeps besides the first. Conditions: a Conv with one output
// X and no fused epilogue (runtime/core/fused_activation.h), not reading X; no other op writes X
// and no backward op names it as a control input; some backward op reads X and, for the control
// input, reads a gradient; no op between the Conv and the insertion point writes its data inputs.
// (The recomputed Conv does not take the forward one's control inputs: its data inputs hold what
// they held then.) The recomputation costs the Conv's forward pass; RecomputableConvs ranks the
// Convs by bytes saved per multiply-add (ascending C/group * kH * kW per output element: ResNet's
// 1x1 expansions and projections first), and BuildTrainingNetsWithinArena
// (runtime/models/training_footprint.h) chooses a few that bring the planned arena within a
// budget. A recomputed X matches the forward's to within float32 rounding (its input, a
// recomputed Relu output, does; a Conv reading forward blobs gives the same bits, oneDNN picking
// the same kernel for one shape on one machine).
//
//   const int first_backward = net.op_size();
//   AddGradientOperators(&net, {"loss"});
//   RecomputeInBackward(&net, first_backward, {.conv_outputs = {"s1_b0_conv3"}});  // before the
//                                                                                  // optimizer
//
// Thread safety: no shared state; each function writes only the net it is given, so calls on
// distinct nets may run on several threads at once.
#ifndef BRAID_RUNTIME_MODELS_RECOMPUTE_H_
#define BRAID_RUNTIME_MODELS_RECOMPUTE_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/op_schema.h"  // ShapeInfo

namespace braid {

struct RecomputeOptions {
  bool bn_relu = true;                 // every SpatialBN + Relu pattern that qualifies
  std::set<std::string> conv_outputs;  // the forward Convs writing these, where they qualify
};
struct RecomputeCount {
  int bn_relu = 0;  // patterns rewritten
  int convs = 0;
};

// Ops [0, first_backward_op) are the forward pass, the rest the backward pass.
RecomputeCount RecomputeInBackward(NetDef* net, int first_backward_op,
                                   const RecomputeOptions& options);

// The outputs of the forward Convs that some backward op reads and that meet the conditions above
// that do not depend on where the Conv would be inserted (what conv_outputs may name), the
// cheapest to recompute per byte first; ties in net order. `shapes` holds the filters' shapes
// (e.g. InferBlobShapes of the init net); a Conv whose filter shape is unknown is left out.
std::vector<std::string> RecomputableConvs(const NetDef& net, int first_backward_op,
                                           const std::map<std::string, ShapeInfo>& shapes);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_RECOMPUTE_H_
