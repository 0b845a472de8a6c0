#include "ops/detection/bbox_transform_op.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/detection/box_args.h"
#include "ops/detection/boxes.h"
#include "ops/detection/image_info.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

using detection::Box;
using detection::BoxDecoder;

struct BBoxTransformArgs {
  BoxDecoder decoder;
  bool apply_scale = true;
};

BBoxTransformArgs ReadBBoxTransformArgs(const OperatorDef& def) {
  detection::RefuseRotated(def);
  detection::CheckAngleArgs(def);
  std::vector<float> weights = ArgumentReader(def.arg()).GetList<float>("weights");
  if (!ArgumentReader(def.arg()).Has("weights")) weights = {1.f, 1.f, 1.f, 1.f};
  if (weights.size() != 4) {
    ThrowInvalidArgument(def.type() + ": weights has " + std::to_string(weights.size()) +
                         " values; it must have 4 [wx, wy, ww, wh]");
  }
  BBoxTransformArgs a;
  a.decoder = detection::ReadBoxDecoder(def, {weights[0], weights[1], weights[2], weights[3]});
  a.apply_scale = detection::ReadFlag(def, "apply_scale", true);
  return a;
}

// Checks rois, deltas, im_info; returns the output shapes.
std::vector<ShapeInfo> BBoxTransformShapes(const OperatorDef& def,
                                           const std::vector<ShapeInfo>& in) {
  const ShapeInfo &rois = in[0], &deltas = in[1];
  detection::CheckImageInfoShape(def, 2, in[2], -1);
  const int64_t images = in[2].dims[0];
  if (rois.dtype != DType::kFloat32 || rois.dims.size() != 2 ||
      !(rois.dims[1] == 5 || (rois.dims[1] == 4 && images == 1))) {
    ThrowInvalidArgument(def.type() + ": rois " + DescribeBlob(def.input(0), rois) +
                         " must be float32 (R, 5) rows [batch_index, x1, y1, x2, y2], or (R, 4) "
                         "when im_info " +
                         DescribeBlob(def.input(2), in[2]) + " has one row");
  }
  if (deltas.dtype != DType::kFloat32 || deltas.dims.size() != 2 ||
      deltas.dims[0] != rois.dims[0] || deltas.dims[1] % 4 != 0) {
    ThrowInvalidArgument(def.type() + ": deltas " + DescribeBlob(def.input(1), deltas) +
                         " must be float32 (" + std::to_string(rois.dims[0]) +
                         ", 4 * classes), one row per RoI of rois " +
                         DescribeBlob(def.input(0), rois));
  }
  return {{DType::kFloat32, deltas.dims, true}, {DType::kFloat32, {images}, true}};
}

// The image of RoI row r (0 for 4-column rois).
int64_t ImageOfRoI(const OperatorBase& op, const float* row, int64_t columns, int64_t r,
                   int64_t images) {
  if (columns == 4) return 0;
  const float b = row[0];
  if (!(b >= 0.f && b < static_cast<float>(images) && b == std::floor(b))) {
    ThrowInvalidArgument(op.type() + ": rois '" + op.def().input(0) + "' row " + std::to_string(r) +
                         " has batch index " + std::to_string(b) + "; im_info has images 0.." +
                         std::to_string(images - 1));
  }
  return static_cast<int64_t>(b);
}

}  // namespace

void BBoxTransformOp::Run() {
  for (int i = 0; i < 3; ++i) CheckInputType(*this, i, {DType::kFloat32});
  const BBoxTransformArgs args = ReadBBoxTransformArgs(def());
  const std::vector<ShapeInfo> shapes = BBoxTransformShapes(def(), InputShapeInfos(*this));
  const std::vector<detection::ImageInfo> images = detection::ReadImageInfo(*this, 2);
  const int64_t rois = Input(0).shape()[0], columns = Input(0).shape()[1];
  const int64_t classes = shapes[0].dims[1] / 4;
  const float* roi = Input(0).data<float>();
  const float* delta = Input(1).data<float>();
  float* out = Output(0, DType::kFloat32, shapes[0].dims)->mutable_data<float>();
  std::vector<float> per_image(images.size(), 0.f);
  for (int64_t r = 0; r < rois; ++r, roi += columns) {
    const int64_t n = ImageOfRoI(*this, roi, columns, r, static_cast<int64_t>(images.size()));
    per_image[n] += 1.f;
    const detection::ImageInfo& im = images[n];
    const float scale_after = args.apply_scale ? im.scale : 1.f;
    const auto height = static_cast<int64_t>(static_cast<double>(im.height / im.scale) + 0.5);
    const auto width = static_cast<int64_t>(static_cast<double>(im.width / im.scale) + 0.5);
    const float* corners = roi + (columns - 4);
    const Box box{corners[0] / im.scale, corners[1] / im.scale, corners[2] / im.scale,
                  corners[3] / im.scale};
    for (int64_t k = 0; k < classes; ++k, delta += 4) {
      const Box clipped = detection::ClipBox(detection::DecodeBox(box, delta, args.decoder), height,
                                             width, args.decoder.plus_one);
      *out++ = clipped.x1 * scale_after;
      *out++ = clipped.y1 * scale_after;
      *out++ = clipped.x2 * scale_after;
      *out++ = clipped.y2 * scale_after;
    }
  }
  if (OutputSize() > 1) {
    float* splits = Output(1, DType::kFloat32, shapes[1].dims)->mutable_data<float>();
    std::copy(per_image.begin(), per_image.end(), splits);
  }
}

BRAID_OPERATOR_SCHEMA(BBoxTransform)
    .NumInputs(3)
    .NumOutputs(1, 2)
    .Arg("weights", ArgKind::kFloats)
    .Arg("apply_scale", ArgKind::kInt)
    .Arg("correct_transform_coords", ArgKind::kInt)
    .Arg("legacy_plus_one", ArgKind::kInt)
    .Arg("rotated", ArgKind::kInt)
    .Args(detection::AngleArgSpecs())
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 3) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      ReadBBoxTransformArgs(def);
      std::vector<ShapeInfo> out = BBoxTransformShapes(def, in);
      out.resize(static_cast<size_t>(def.output_size()));
      return out;
    })
    .SetDoc(
        "Decodes box deltas [R,4K] against rois [R,5] or [R,4] and clips them to im_info's "
        "images; optional output roi_batch_splits [N]. Args: weights [1,1,1,1], apply_scale 1, "
        "legacy_plus_one 1, correct_transform_coords, rotated 0.");

BRAID_REGISTER_CPU_OPERATOR(BBoxTransform, BBoxTransformOp);
BRAID_NO_GRADIENT(BBoxTransform);

}  // namespace braid
