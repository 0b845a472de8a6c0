// Arguments the Detectron box ops share, read and checked once: 0/1 flags, `legacy_plus_one`,
// the box decoding of BBoxTransform and GenerateProposals, and the rotated-box arguments, which
// braid accepts (a net exported for upright boxes may carry them) but which change nothing for
// axis-aligned boxes; `rotated: 1` itself is refused.
//
//   const float plus_one = ReadPlusOne(def);                       // legacy_plus_one, default 1
//   BoxDecoder decoder = ReadBoxDecoder(def, {10, 10, 5, 5});      // plus correct_transform_coords
//   RefuseRotated(def);
//   CheckAngleArgs(def);
//
// Errors name the op type and the argument. Pure functions; thread-safe.
#ifndef BRAID_OPS_DETECTION_BOX_ARGS_H_
#define BRAID_OPS_DETECTION_BOX_ARGS_H_

#include <array>
#include <string>
#include <vector>

#include "ops/detection/boxes.h"
#include "proto/braid.pb.h"
#include "runtime/core/arg_spec.h"

namespace braid::detection {

// The int argument `name`, which must be 0 or 1.
bool ReadFlag(const OperatorDef& def, const std::string& name, bool fallback);
// legacy_plus_one (default 1) as the number added to x2 - x1 for a width: 1.f or 0.f.
float ReadPlusOne(const OperatorDef& def);
// The float argument `name`, which must be finite and, when `positive`, > 0 (else >= 0).
float ReadNonNegative(const OperatorDef& def, const std::string& name, float fallback,
                      bool positive);
// Decoding with `weights` (each finite and > 0), legacy_plus_one and correct_transform_coords:
// absent, the decoded x2 / y2 are reduced by plus_one (Caffe2 today); 1, the same (Detectron's
// transform, refused with legacy_plus_one 0); 0, not reduced (Caffe2 before legacy_plus_one).
BoxDecoder ReadBoxDecoder(const OperatorDef& def, const std::array<float, 4>& weights);
// Refuses `rotated: 1` (boxes [ctr_x, ctr_y, w, h, angle]).
void RefuseRotated(const OperatorDef& def);
// Checks angle_bound_on (0/1), angle_bound_lo / angle_bound_hi (default -90 / 90; hi - lo a
// positive multiple of 180) and clip_angle_thresh (finite), which only rotated boxes would use.
void CheckAngleArgs(const OperatorDef& def);
// The declarations (runtime/core/arg_spec.h) of the arguments CheckAngleArgs reads.
const std::vector<ArgSpec>& AngleArgSpecs();

}  // namespace braid::detection

#endif  // BRAID_OPS_DETECTION_BOX_ARGS_H_
