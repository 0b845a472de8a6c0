// FusedActivation: the activation a Conv applies as it writes its output, an inference fusion that
// runtime/models/fuse_conv_activation.h sets and ops/nn/conv_op.h runs (oneDNN's eltwise post-op):
//
//   fused_activation      string: "Relu", Y = max(y, 0); or "Clip",
//                         Y = min(max(y, fused_min), fused_max)
//   fused_min, fused_max  floats, Clip's bounds (default: the float range)
//
// where y = conv(X) + bias. A Conv with one has no gradient, and CUDA's Conv refuses it.
// Thread safety: a pure function of the OperatorDef.
#ifndef BRAID_RUNTIME_FUSED_ACTIVATION_H_
#define BRAID_RUNTIME_FUSED_ACTIVATION_H_

#include <cstdint>

#include "proto/braid.pb.h"

namespace braid {

inline constexpr char kFusedActivationArg[] = "fused_activation";
inline constexpr char kFusedMinArg[] = "fused_min";
inline constexpr char kFusedMaxArg[] = "fused_max";

struct FusedActivation {
  enum class Kind : uint8_t { kNone, kRelu, kClip };
  Kind kind = Kind::kNone;
  float min = 0.f, max = 0.f;  // kClip's bounds
};

// `op`'s fused activation; throws braid::Error (InvalidArgument) naming the op for an unknown name
// or a Clip whose min exceeds its max.
FusedActivation FusedActivationOf(const OperatorDef& op);

}  // namespace braid

#endif  // BRAID_RUNTIME_FUSED_ACTIVATION_H_
