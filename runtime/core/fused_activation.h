// The epilogue a Conv applies as it writes its output, inference fusions that
// runtime/models/fuse_conv_sum.h and runtime/models/fuse_conv_activation.h set and ops/nn/conv_op.h
// runs (oneDNN's binary and eltwise post-ops), in this order:
//
//   fused_sum             int 1: the Conv's last input S (after X, the filter and the optional
//                         bias) is added, y = conv(X) + bias + S; S has Y's shape and is not Y
//   fused_activation      string: "Relu", Y = max(y, 0); or "Clip",
//                         Y = min(max(y, fused_min), fused_max)
//   fused_min, fused_max  floats, Clip's bounds (default: the float range)
//
// where y = conv(X) + bias (+ S). A Conv with either has no gradient, and CUDA's Conv refuses them.
// Thread safety: pure functions of the OperatorDef.
#ifndef BRAID_RUNTIME_CORE_FUSED_ACTIVATION_H_
#define BRAID_RUNTIME_CORE_FUSED_ACTIVATION_H_

#include <cstdint>

#include "proto/braid.pb.h"

namespace braid {

inline constexpr char kFusedActivationArg[] = "fused_activation";
inline constexpr char kFusedMinArg[] = "fused_min";
inline constexpr char kFusedMaxArg[] = "fused_max";
inline constexpr char kFusedSumArg[] = "fused_sum";

struct FusedActivation {
  enum class Kind : uint8_t { kNone, kRelu, kClip };
  Kind kind = Kind::kNone;
  float min = 0.f, max = 0.f;  // kClip's bounds
};

// `op`'s fused activation; throws braid::Error (InvalidArgument) naming the op for an unknown name
// or a Clip whose min exceeds its max.
FusedActivation FusedActivationOf(const OperatorDef& op);
// Whether `op` adds its last input to its output (fused_sum = 1); throws braid::Error
// (InvalidArgument) naming the op for a value other than 0 or 1.
bool HasFusedSum(const OperatorDef& op);
// Whether `op` has either fusion: a Conv to leave alone in the rewrites, and without a gradient.
bool HasFusedEpilogue(const OperatorDef& op);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_FUSED_ACTIVATION_H_
