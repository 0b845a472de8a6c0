#include "ops/detection/box_args.h"

#include <cmath>
#include <cstdint>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"

namespace braid::detection {

bool ReadFlag(const OperatorDef& def, const std::string& name, bool fallback) {
  const int64_t v = ArgumentReader(def.arg()).Get<int64_t>(name, fallback ? 1 : 0);
  if (v != 0 && v != 1) {
    ThrowInvalidArgument(def.type() + ": " + name + " " + std::to_string(v) + " must be 0 or 1");
  }
  return v == 1;
}

float ReadPlusOne(const OperatorDef& def) {
  return ReadFlag(def, "legacy_plus_one", true) ? 1.f : 0.f;
}

float ReadNonNegative(const OperatorDef& def, const std::string& name, float fallback,
                      bool positive) {
  const float v = ArgumentReader(def.arg()).Get<float>(name, fallback);
  if (!std::isfinite(v) || v < 0.f || (positive && v == 0.f)) {
    ThrowInvalidArgument(def.type() + ": " + name + " " + std::to_string(v) +
                         (positive ? " must be finite and > 0" : " must be finite and >= 0"));
  }
  return v;
}

BoxDecoder ReadBoxDecoder(const OperatorDef& def, const std::array<float, 4>& weights) {
  BoxDecoder decoder;
  decoder.weights = weights;
  for (float w : weights) {
    if (!std::isfinite(w) || !(w > 0.f)) {
      ThrowInvalidArgument(def.type() + ": weights [" + std::to_string(weights[0]) + ", " +
                           std::to_string(weights[1]) + ", " + std::to_string(weights[2]) + ", " +
                           std::to_string(weights[3]) + "] must be finite and > 0");
    }
  }
  decoder.plus_one = ReadPlusOne(def);
  decoder.end_offset = decoder.plus_one;
  if (ArgumentReader(def.arg()).Has("correct_transform_coords")) {
    const bool correct = ReadFlag(def, "correct_transform_coords", false);
    if (correct && decoder.plus_one == 0.f) {
      ThrowInvalidArgument(def.type() +
                           ": correct_transform_coords 1 (Detectron's +1 box transform) "
                           "contradicts legacy_plus_one 0");
    }
    decoder.end_offset = correct ? 1.f : 0.f;
  }
  return decoder;
}

void RefuseRotated(const OperatorDef& def) {
  if (ReadFlag(def, "rotated", false)) {
    ThrowInvalidArgument(def.type() +
                         ": rotated 1 (boxes [ctr_x, ctr_y, w, h, angle]) is not supported; "
                         "only axis-aligned boxes [x1, y1, x2, y2]");
  }
}

void CheckAngleArgs(const OperatorDef& def) {
  ReadFlag(def, "angle_bound_on", true);
  const ArgumentReader args(def.arg());
  const int64_t lo = args.Get<int64_t>("angle_bound_lo", -90);
  const int64_t hi = args.Get<int64_t>("angle_bound_hi", 90);
  if (hi - lo <= 0 || (hi - lo) % 180 != 0) {
    ThrowInvalidArgument(def.type() + ": angle_bound_hi " + std::to_string(hi) +
                         " - angle_bound_lo " + std::to_string(lo) +
                         " must be a positive multiple of 180");
  }
  const float thresh = args.Get<float>("clip_angle_thresh", 1.f);
  if (!std::isfinite(thresh)) {
    ThrowInvalidArgument(def.type() + ": clip_angle_thresh " + std::to_string(thresh) +
                         " must be finite");
  }
}

const std::vector<ArgSpec>& AngleArgSpecs() {
  static const auto* specs = new std::vector<ArgSpec>{{"angle_bound_on", ArgKind::kInt},
                                                      {"angle_bound_lo", ArgKind::kInt},
                                                      {"angle_bound_hi", ArgKind::kInt},
                                                      {"clip_angle_thresh", ArgKind::kFloat}};
  return *specs;
}

}  // namespace braid::detection
