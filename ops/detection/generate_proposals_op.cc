#include "ops/detection/generate_proposals_op.h"

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

struct ProposalArgs {
  float feature_stride = 16.f;  // 1 / spatial_scale
  int64_t pre_nms_top_n = 6000, post_nms_top_n = 300;
  float nms_thresh = 0.7f;
  float min_size = 16.f;
  detection::BoxDecoder decoder;
};

ProposalArgs ReadProposalArgs(const OperatorDef& def) {
  detection::CheckAngleArgs(def);
  const ArgumentReader args(def.arg());
  ProposalArgs a;
  a.feature_stride = static_cast<float>(
      1.0 / detection::ReadNonNegative(def, "spatial_scale", 1.f / 16, /*positive=*/true));
  a.pre_nms_top_n = args.Get<int64_t>("pre_nms_topN", 6000);
  a.post_nms_top_n = args.Get<int64_t>("post_nms_topN", 300);
  a.nms_thresh = detection::ReadNonNegative(def, "nms_thresh", 0.7f, /*positive=*/false);
  a.min_size = detection::ReadNonNegative(def, "min_size", 16.f, /*positive=*/false);
  a.decoder = detection::ReadBoxDecoder(def, {1.f, 1.f, 1.f, 1.f});
  return a;
}

void CheckProposalShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  const ShapeInfo &scores = in[0], &deltas = in[1], &anchors = in[3];
  const std::string op = def.type() + ": ";
  if (scores.dtype != DType::kFloat32 || scores.dims.size() != 4) {
    ThrowInvalidArgument(op + "scores " + DescribeBlob(def.input(0), scores) +
                         " must be float32 (N, A, H, W)");
  }
  const int64_t n = scores.dims[0], a = scores.dims[1], h = scores.dims[2], w = scores.dims[3];
  if (anchors.dtype == DType::kFloat32 && anchors.dims == std::vector<int64_t>{a, 5}) {
    ThrowInvalidArgument(op + "anchors " + DescribeBlob(def.input(3), anchors) +
                         " are rotated boxes [ctr_x, ctr_y, w, h, angle], not supported");
  }
  if (anchors.dtype != DType::kFloat32 || anchors.dims != std::vector<int64_t>{a, 4}) {
    ThrowInvalidArgument(op + "anchors " + DescribeBlob(def.input(3), anchors) +
                         " must be float32" + DimsText({a, 4}) +
                         ", one [x1, y1, x2, y2] per anchor of scores " +
                         DescribeBlob(def.input(0), scores));
  }
  if (deltas.dtype != DType::kFloat32 || deltas.dims != std::vector<int64_t>{n, 4 * a, h, w}) {
    ThrowInvalidArgument(op + "bbox_deltas " + DescribeBlob(def.input(1), deltas) +
                         " must be float32" + DimsText({n, 4 * a, h, w}) + " for scores " +
                         DescribeBlob(def.input(0), scores));
  }
  detection::CheckImageInfoShape(def, 2, in[2], n);
}

struct Proposals {
  std::vector<Box> boxes;
  std::vector<float> scores;
};

// One image: scores [A, H, W], deltas [4A, H, W].
Proposals ProposalsForImage(const ProposalArgs& args, const detection::ImageInfo& im,
                            const float* anchors, const float* scores, const float* deltas,
                            int64_t a_count, int64_t height, int64_t width) {
  const int64_t cells = height * width, count = cells * a_count;
  // Candidate j = (h * W + w) * A + a: Detectron's (H, W, A) order.
  std::vector<float> candidate_scores(static_cast<size_t>(count));
  for (int64_t cell = 0; cell < cells; ++cell) {
    for (int64_t a = 0; a < a_count; ++a) {
      candidate_scores[cell * a_count + a] = scores[a * cells + cell];
    }
  }
  std::vector<int> order =
      detection::OrderByScore(candidate_scores.data(), detection::AllIndices(count));
  if (args.pre_nms_top_n > 0 && args.pre_nms_top_n < count) order.resize(args.pre_nms_top_n);

  const float plus_one = args.decoder.plus_one;
  const double min_size = static_cast<double>(args.min_size) * im.scale;
  std::vector<float> decoded;  // 4 floats per box
  std::vector<float> decoded_scores;
  std::vector<int> kept_by_size;
  for (int j : order) {
    const int64_t cell = j / a_count, a = j % a_count;
    const float shift_x = static_cast<float>(cell % width) * args.feature_stride;
    const float shift_y = static_cast<float>(cell / width) * args.feature_stride;
    const float* anchor = anchors + a * 4;
    const Box shifted{anchor[0] + shift_x, anchor[1] + shift_y, anchor[2] + shift_x,
                      anchor[3] + shift_y};
    float delta[4];
    for (int k = 0; k < 4; ++k) delta[k] = deltas[(a * 4 + k) * cells + cell];
    const Box box = detection::ClipBox(detection::DecodeBox(shifted, delta, args.decoder),
                                       static_cast<int64_t>(im.height),
                                       static_cast<int64_t>(im.width), plus_one);
    const float box_w = box.x2 - box.x1 + plus_one, box_h = box.y2 - box.y1 + plus_one;
    if (box_w >= min_size && box_h >= min_size && box.x1 + box_w / 2 < im.width &&
        box.y1 + box_h / 2 < im.height) {
      kept_by_size.push_back(static_cast<int>(decoded_scores.size()));
    }
    decoded.insert(decoded.end(), {box.x1, box.y1, box.x2, box.y2});
    decoded_scores.push_back(candidate_scores[j]);
  }
  const detection::BoxList boxes{decoded.data(), 4};
  const std::vector<int> kept =
      detection::Nms(boxes, kept_by_size, args.nms_thresh,
                     args.post_nms_top_n > 0 ? args.post_nms_top_n : -1, plus_one);
  Proposals p;
  for (int i : kept) {
    p.boxes.push_back(boxes[i]);
    p.scores.push_back(decoded_scores[i]);
  }
  return p;
}

void CheckNoNaN(const OperatorBase& op, int index) {
  const Tensor& t = op.Input(index);
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (std::isnan(p[i])) {
      ThrowInvalidArgument(op.type() + ": " + DescribeInput(op, index) +
                           " holds NaN at flat index " + std::to_string(i));
    }
  }
}

}  // namespace

void GenerateProposalsOp::Run() {
  for (int i = 0; i < 4; ++i) CheckInputType(*this, i, {DType::kFloat32});
  const ProposalArgs args = ReadProposalArgs(def());
  CheckProposalShapes(def(), InputShapeInfos(*this));
  CheckNoNaN(*this, 0);
  const std::vector<detection::ImageInfo> images = detection::ReadImageInfo(*this, 2);
  const std::vector<int64_t>& dims = Input(0).shape();
  const int64_t a = dims[1], h = dims[2], w = dims[3];
  std::vector<Proposals> per_image;
  int64_t total = 0;
  for (int64_t n = 0; n < dims[0]; ++n) {
    per_image.push_back(ProposalsForImage(args, images[n], Input(3).data<float>(),
                                          Input(0).data<float>() + n * a * h * w,
                                          Input(1).data<float>() + n * 4 * a * h * w, a, h, w));
    total += static_cast<int64_t>(per_image.back().scores.size());
  }
  float* rois = Output(0, DType::kFloat32, {total, 5})->mutable_data<float>();
  float* probs = Output(1, DType::kFloat32, {total})->mutable_data<float>();
  for (size_t n = 0; n < per_image.size(); ++n) {
    for (size_t i = 0; i < per_image[n].boxes.size(); ++i) {
      const Box& b = per_image[n].boxes[i];
      *rois++ = static_cast<float>(n);
      *rois++ = b.x1;
      *rois++ = b.y1;
      *rois++ = b.x2;
      *rois++ = b.y2;
      *probs++ = per_image[n].scores[i];
    }
  }
}

BRAID_OPERATOR_SCHEMA(GenerateProposals)
    .NumInputs(4)
    .NumOutputs(2)
    .Arg("spatial_scale", ArgKind::kFloat)
    .Arg("pre_nms_topN", ArgKind::kInt)
    .Arg("post_nms_topN", ArgKind::kInt)
    .Arg("nms_thresh", ArgKind::kFloat)
    .Arg("min_size", ArgKind::kFloat)
    .Arg("correct_transform_coords", ArgKind::kInt)
    .Arg("legacy_plus_one", ArgKind::kInt)
    .Args(detection::AngleArgSpecs())
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 4) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      ReadProposalArgs(def);
      CheckProposalShapes(def, in);
      // The number of proposals depends on the scores: unknown until the op runs.
      return std::vector<ShapeInfo>{{DType::kFloat32, {}, false}, {DType::kFloat32, {}, false}};
    })
    .SetDoc(
        "RPN proposals: scores [N,A,H,W], bbox_deltas [N,4A,H,W], im_info [N,3], anchors [A,4] "
        "-> rois [R,5], rois_probs [R]. Args: spatial_scale 1/16, pre_nms_topN 6000, "
        "post_nms_topN 300, nms_thresh 0.7, min_size 16, legacy_plus_one 1.");

BRAID_REGISTER_CPU_OPERATOR(GenerateProposals, GenerateProposalsOp);
BRAID_NO_GRADIENT(GenerateProposals);

}  // namespace braid
