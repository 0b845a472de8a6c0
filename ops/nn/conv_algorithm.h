// Which oneDNN algorithm, direct or Winograd, a convolution runs in each direction (forward,
// backward-data, backward-weights), chosen by timing both through the process-wide
// AlgorithmRegistry (runtime/device/algorithm_registry.h), and the primitive descriptors of each
// direction for a given algorithm. Conv and ConvGradient (ops/nn/conv_op.h, conv_gradient_op.h)
// ask ChooseConvAlgorithm when they prepare a shape.
//
// Candidates: Winograd only where WinogradEligible (ops/nn/conv_op.h) allows it and oneDNN builds
// it for this CPU, then direct. With the registry in SearchMode::kMeasure (the default) the faster
// of those that fit the workspace limit wins; with BRAID_ALGORITHM_SEARCH=rule the first that fits
// (the old size rule: Winograd when eligible), without timing, the same in every process.
//
// A search builds both primitives, runs each once to warm up and kSearchRuns times, and takes the
// median. Operands are zeroed pages mapped for the search and unmapped after it, or for a forward
// search given ConvSearchMemory the op's own input (only read) and output. A forward candidate is
// timed with the reorder of the op's filter into its weights layout, which the op runs on every
// run too (Winograd's transformed weights, a plain filter into the blocked one; nothing for a
// packed filter, runtime/models/pack_parameters.h, that a direct candidate reads as it is): at
// batch 1 that reorder can cost more than Winograd saves. The key (ConvAlgorithmKey) names the
// direction, engine, CPU ISA, data type, shapes (batch included), window, group, bias, the filter's
// layout and the primitive's layouts (format_tag::any: the activations' own layouts only add
// reorders, the same for both candidates, so plain and blocked nets share choices and bits). It
// names no device: cpu and sim devices, and every replica of a data-parallel net, run the same
// algorithm, so sim and cpu training agree bit for bit. Across processes choices may differ
// (timings are noisy); --algo_cache in the tools, or the rule mode, pins them.
//
// Thread safety: every function may be called from any thread (the registry serialises searches
// per key and per device).
//
//   const dnnl::algorithm a = ChooseConvAlgorithm(shapes, ConvDirection::kForward, device());
//   const auto pd = MakeConvForwardDesc(shapes, a);
#ifndef BRAID_OPS_NN_CONV_ALGORITHM_H_
#define BRAID_OPS_NN_CONV_ALGORITHM_H_

#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "ops/nn/conv_op.h"
#include "runtime/core/device.h"

namespace braid {

enum class ConvDirection { kForward, kBackwardData, kBackwardWeights };
const char* ConvDirectionName(ConvDirection direction);  // "forward", "backward_data", ...
const char* ConvAlgorithmName(dnnl::algorithm algorithm);  // "direct", "winograd"

// Timed runs per candidate in a search (after one warm-up run); the median counts.
inline constexpr int kSearchRuns = 3;

// The registry key of `s` in `direction`. Backward keys also name the `forward` algorithm, whose
// primitive is the hint that shapes the backward primitives' layouts (ignored for kForward).
std::string ConvAlgorithmKey(const ConvShapes& s, ConvDirection direction,
                             dnnl::algorithm forward = dnnl::algorithm::convolution_direct);

// Memory a forward search may time its candidates on instead of allocating its own: the op's
// input (only read) and output (about to be written), each used where a candidate's layout fits
// in its bytes. Without it a search holds a layer's input and output twice at its peak, tens of MB
// over the net's arena on a large layer.
struct ConvSearchMemory {
  const void* src = nullptr;
  size_t src_bytes = 0;
  void* dst = nullptr;
  size_t dst_bytes = 0;
  const void* filter = nullptr;  // the op's filter (in ConvShapes::w_layout), only read
  size_t filter_bytes = 0;
  const void* summand = nullptr;  // with fused_sum: the op's summand, only read
  size_t summand_bytes = 0;
};

// The largest scratchpad among the forward candidates for `s` (what a forward search allocates
// beside the op's operands; Winograd's grows with the batch: 82 MB for Inception-v3's 147x147
// layer at batch 8). Conv picks its batch chunk so that this fits. Throws braid::Error when
// oneDNN has no direct kernel for `s`.
int64_t LargestForwardScratchpadBytes(const ConvShapes& s);

// The algorithm every device runs for `s` in `direction`; searches (on `device`, with its
// workspace limit) when no one has yet. Throws braid::Error when nothing fits or builds.
dnnl::algorithm ChooseConvAlgorithm(const ConvShapes& s, ConvDirection direction,
                                    const Device& device, const ConvSearchMemory& memory = {});

// Primitive descriptors for `algorithm` (layouts left to oneDNN). They throw dnnl::error when
// oneDNN has no kernel for it. A forward convolution with a summand reads it, at kSummandArg, in
// the layout of its dst_desc(): the one oneDNN picks for the convolution without post-ops.
dnnl::convolution_forward::primitive_desc MakeConvForwardDesc(const ConvShapes& s,
                                                              dnnl::algorithm algorithm);
inline constexpr int kSummandArg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;
dnnl::convolution_backward_weights::primitive_desc MakeConvBackwardWeightsDesc(
    const ConvShapes& s, dnnl::algorithm algorithm,
    const dnnl::convolution_forward::primitive_desc& hint);
dnnl::convolution_backward_data::primitive_desc MakeConvBackwardDataDesc(
    const ConvShapes& s, dnnl::algorithm algorithm,
    const dnnl::convolution_forward::primitive_desc& hint);

}  // namespace braid

#endif  // BRAID_OPS_NN_CONV_ALGORITHM_H_
