// Conv: 2-D convolution of NCHW float32 tensors on oneDNN (Caffe2's Conv).
//
//   X [N, C, H, W], filter [M, C/group, kH, kW], optional bias [M]  ->  Y [N, M, outH, outW]
//
// Window arguments (kernel, stride, pad, dilation, legacy_pad, order) are described in
// ops/nn/conv_pool_window.h; the kernel arguments may be omitted (the filter's are used). `group`
// (default 1) must divide C and M. The gradient is ConvGradient (ops/nn/conv_gradient_op.h).
//
//   type: "Conv" input: "X" input: "W" input: "b" output: "Y"
//   arg { name: "kernel" i: 3 } arg { name: "pad" i: 1 } arg { name: "stride" i: 2 }
//
// Layouts: oneDNN picks the layouts of src, weights and dst (blocked nChw16c / OIhw16i16o on
// AVX-512, nChw8c / OIhw8i8o on AVX2) and the op reorders from and to the tensors' layouts around
// the convolution: none for an X blocked as the primitive reads it, nor for a Y its
// blocked_outputs argument asks blocked
// (runtime/core/tensor.h; runtime/models/blocked_layouts.h decides). The blocked convolution with
// its reorders beats oneDNN's plain-NCHW (gemm) one severalfold, forward and backward (README,
// "Measurements behind the design"; ConvOpTest.ResNet20LayerTimes in tests/ops/nn/conv_op_test.cc
// prints the blocked times).
//
// The filter may be plain or, where an inference net's loader packed it
// (runtime/models/pack_parameters.h, PackConvFilter below), Layout::kFilterBlocked16 (AVX-512) or
// kFilterBlocked8 (AVX2): then the direct primitive reads it as it is, where a plain filter is
// reordered on every run (at batch 1 a share of the convolution's time worth saving: README,
// "Measurements behind the design").
//
// An inference net's loader may give the Conv the Sum or Add after it and the activation after
// that (runtime/core/fused_activation.h): the primitive then adds the summand S and applies the
// activation as it writes Y (oneDNN's binary and eltwise post-ops), S read in the layout the
// primitive writes (reordered into it where S's layout differs): one pass over Y instead of three
// (README, "Measurements behind the design").
//
// Primitives are cached per shape and window in PrimitiveCache (ops/nn/dnnl_util.h) and shared by
// every Conv of that shape; each op also keeps the plan of its last shape, so a steady-state run
// takes no lock and allocates nothing. A large batch runs in chunks of samples (BatchChunk), so
// that the op's scratch (blocked copies of X and Y, the primitive's scratchpad) holds one chunk and
// fits kChunkScratchBytes where a smaller chunk can make it.
#ifndef BRAID_OPS_NN_CONV_OP_H_
#define BRAID_OPS_NN_CONV_OP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ops/nn/conv_pool_window.h"
#include "ops/nn/dnnl_util.h"
#include "runtime/core/fused_activation.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

struct ConvSearchMemory;  // ops/nn/conv_algorithm.h

struct ConvShapes {
  ConvPoolWindow window;
  int64_t group = 1;
  bool has_bias = false;
  // Applied by the primitive as it writes Y, in this order (runtime/core/fused_activation.h): the
  // summand, the op's last input (runtime/models/fuse_conv_sum.h), then the activation
  // (runtime/models/fuse_conv_activation.h).
  bool has_summand = false;
  FusedActivation activation;
  std::vector<int64_t> x_dims, filter_dims, y_dims;
  // Tensor layouts, set by the op (not by ComputeConvShapes): X, the filter, Y and the summand for
  // Conv; X, dY and dX for ConvGradient.
  Layout x_layout = Layout::kPlain, w_layout = Layout::kPlain, y_layout = Layout::kPlain,
         s_layout = Layout::kPlain, dx_layout = Layout::kPlain;

  int64_t out_channels() const { return filter_dims[0]; }
  // The filter as oneDNN sees it: [M, C/g, kH, kW], or [g, M/g, C/g, kH, kW] when grouped.
  dnnl::memory::dims DnnlWeightDims() const;
  // The filter tensor's descriptor: plain over DnnlWeightDims, or its packed layout (w_layout).
  dnnl::memory::desc FilterDesc() const;
};

// The shapes of Conv op `def` with inputs X, filter, the optional bias and, with fused_sum, the
// summand. Throws braid::Error naming the blobs for bad windows, channel mismatches, a group not
// dividing C/M, or a summand that is missing or has another shape than Y. (The summand is never
// Y: OpSchema::Verify refuses a Conv whose input is its output, runtime/core/op_schema.h.)
ConvShapes ComputeConvShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in);

// A forward convolution: oneDNN primitive and the reorders around it (immutable, cacheable).
struct ConvForwardPlan {
  LayoutBridge src, weights, dst, summand;  // summand: with fused_sum only
  dnnl::memory::desc bias;
  DnnlPrimitive conv;
};
// Algorithm: the AlgorithmRegistry times oneDNN's direct and Winograd F(4x4, 3x3) kernels per
// shape and direction and every device runs the faster (ops/nn/conv_algorithm.h). Winograd is a
// candidate only for 3x3, stride-1, undilated, ungrouped convolutions with 16 <= C, M and
// C * M <= 256 * 256, where oneDNN has a kernel for it (AVX-512): WinogradEligible, which was the
// whole rule before the registry and still is with BRAID_ALGORITHM_SEARCH=rule.
// Below 16 channels the blocked tiles would be mostly padding. The Winograd scratchpads grow with
// C * M, to tens of times a layer's activation, while the gain over direct shrinks, hence the cap
// (its measurements, and Winograd's gains against direct: README, "Measurements behind the
// design"). Winograd rounds differently (its
// transforms add float32 noise of ~1e-5 of |Y|), well inside training noise.
inline constexpr int64_t kMaxWinogradChannelProduct = 256 * 256;
bool WinogradEligible(const ConvShapes& s);

// Packs `filter` (input 1 of Conv `op`, a constant parameter) in place into
// Layout::kFilterBlocked16 or kFilterBlocked8, whichever oneDNN's direct convolution reads on this
// CPU, for an ungrouped filter whose M and C are multiples of that block; returns whether it did
// (else `filter` is left as it is). The Conv schema's PackedInput (runtime/core/op_schema.h).
bool PackConvFilter(const OperatorDef& op, Tensor* filter);

class ConvOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;

 private:
  void Prepare();
  // The plan for `chunk` samples per call, and this op's binding of it; an algorithm search it
  // starts times its candidates on `search` (ops/nn/conv_algorithm.h).
  void Bind(int64_t chunk, const ConvSearchMemory& search);

  std::vector<std::vector<int64_t>> prepared_dims_;  // input dims the plan was made for
  ConvShapes shapes_;                                // and X's layout (shapes_.x_layout)
  int64_t chunk_ = 0;  // samples per primitive call (BatchChunk, ops/nn/dnnl_util.h)
  std::shared_ptr<const ConvForwardPlan> plan_;
  ScratchLayout scratch_;
  BoundTensor src_, weights_, dst_, summand_;
  dnnl::memory bias_;
  BoundPrimitive conv_;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_CONV_OP_H_
