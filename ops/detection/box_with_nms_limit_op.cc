#include "ops/detection/box_with_nms_limit_op.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/detection/box_args.h"
#include "ops/detection/boxes.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

struct NmsLimitArgs {
  float score_thresh = 0.05f;
  float nms = 0.3f;
  int64_t detections_per_im = 100;
  bool soft_nms = false;
  detection::SoftNmsOptions soft;
  bool cls_agnostic = false;
  bool boxes_include_bg = true;
  bool classes_include_bg = true;
  float plus_one = 1.f;

  int64_t ScoreColumn(int64_t cls) const { return cls - (boxes_include_bg ? 0 : 1); }
  int64_t BoxColumn(int64_t cls) const { return cls_agnostic ? 0 : ScoreColumn(cls); }
  int64_t BoxClasses(int64_t classes) const {
    return cls_agnostic ? 1 : boxes_include_bg ? classes : classes - 1;
  }
};

NmsLimitArgs ReadNmsLimitArgs(const OperatorDef& def) {
  detection::RefuseRotated(def);
  const ArgumentReader args(def.arg());
  NmsLimitArgs a;
  a.score_thresh = args.Get<float>("score_thresh", 0.05f);
  if (std::isnan(a.score_thresh)) ThrowInvalidArgument(def.type() + ": score_thresh is NaN");
  a.nms = detection::ReadNonNegative(def, "nms", 0.3f, /*positive=*/false);
  a.detections_per_im = args.Get<int64_t>("detections_per_im", 100);
  a.soft_nms = detection::ReadFlag(def, "soft_nms_enabled", false);
  const std::string method = args.Get<std::string>("soft_nms_method", "linear");
  if (method != "linear" && method != "gaussian") {
    ThrowInvalidArgument(def.type() + ": soft_nms_method '" + method +
                         "' must be 'linear' or 'gaussian'");
  }
  a.soft.gaussian = method == "gaussian";
  a.soft.sigma = detection::ReadNonNegative(def, "soft_nms_sigma", 0.5f, /*positive=*/true);
  a.soft.overlap_thresh = a.nms;
  a.soft.min_score = args.Get<float>("soft_nms_min_score_thres", 0.001f);
  if (std::isnan(a.soft.min_score)) {
    ThrowInvalidArgument(def.type() + ": soft_nms_min_score_thres is NaN");
  }
  a.cls_agnostic = detection::ReadFlag(def, "cls_agnostic_bbox_reg", false);
  a.boxes_include_bg = detection::ReadFlag(def, "input_boxes_include_bg_cls", true);
  a.classes_include_bg = detection::ReadFlag(def, "output_classes_include_bg_cls", true);
  a.plus_one = detection::ReadPlusOne(def);
  return a;
}

// scores and boxes as 2-D (a 4-D [R, X, 1, 1] read as [R, X]).
std::vector<int64_t> Rows(const ShapeInfo& info) {
  const std::vector<int64_t>& d = info.dims;
  if (d.size() == 2) return d;
  if (d.size() == 4 && d[2] == 1 && d[3] == 1) return {d[0], d[1]};
  return {};
}

// Checks the inputs and output count; returns {images, classes}.
std::pair<int64_t, int64_t> CheckNmsLimitShapes(const OperatorDef& def, const NmsLimitArgs& a,
                                                const std::vector<ShapeInfo>& in) {
  const std::string op = def.type() + ": ";
  if (def.output_size() == 5) {
    ThrowInvalidArgument(op +
                         "has 5 outputs; it takes 3, 4 (batch_splits) or 6 (keeps, "
                         "keeps_size)");
  }
  const std::vector<int64_t> scores = Rows(in[0]), boxes = Rows(in[1]);
  if (in[0].dtype != DType::kFloat32 || scores.empty() || scores[1] < 1) {
    ThrowInvalidArgument(op + "scores " + DescribeBlob(def.input(0), in[0]) +
                         " must be float32 (R, classes) with classes >= 1");
  }
  const std::vector<int64_t> expected{scores[0], a.BoxClasses(scores[1]) * 4};
  if (in[1].dtype != DType::kFloat32 || boxes != expected) {
    ThrowInvalidArgument(op + "boxes " + DescribeBlob(def.input(1), in[1]) + " must be float32" +
                         DimsText(expected) + " for scores " + DescribeBlob(def.input(0), in[0]) +
                         " (cls_agnostic_bbox_reg, input_boxes_include_bg_cls)");
  }
  if (in.size() < 3) return {1, scores[1]};
  const bool splits_ok =
      (in[2].dtype == DType::kFloat32 || in[2].dtype == DType::kInt32) && in[2].dims.size() == 1;
  if (!splits_ok) {
    ThrowInvalidArgument(op + "batch_splits " + DescribeBlob(def.input(2), in[2]) +
                         " must be a float32 or int32 vector (rows per image)");
  }
  return {in[2].dims[0], scores[1]};
}

// Rows per image, from batch_splits (all rows in one image without it).
std::vector<int64_t> ReadBatchSplits(const OperatorBase& op, int64_t rows) {
  if (op.InputSize() < 3) return {rows};
  const Tensor& t = op.Input(2);
  std::vector<int64_t> splits;
  int64_t sum = 0;
  for (int64_t b = 0; b < t.numel(); ++b) {
    const double v = t.dtype() == DType::kInt32 ? t.data<int32_t>()[b] : t.data<float>()[b];
    if (!(v >= 0 && v == std::floor(v) && v <= static_cast<double>(rows))) {
      ThrowInvalidArgument(op.type() + ": batch_splits '" + op.def().input(2) + "' entry " +
                           std::to_string(b) + " is " + std::to_string(v) +
                           "; entries must be whole numbers of rows >= 0");
    }
    splits.push_back(static_cast<int64_t>(v));
    sum += splits.back();
  }
  if (sum != rows) {
    ThrowInvalidArgument(op.type() + ": batch_splits '" + op.def().input(2) + "' sums to " +
                         std::to_string(sum) + ", but scores has " + std::to_string(rows) +
                         " rows");
  }
  return splits;
}

struct Detections {
  std::vector<float> scores, boxes, classes;
  std::vector<int32_t> keeps, keeps_size, batch_splits;
};

// One image: `rows` rows of scores (row width `classes`) and boxes (row width `box_width`).
void DetectImage(const NmsLimitArgs& a, const float* scores, const float* boxes, int64_t rows,
                 int64_t classes, int64_t box_width, Detections* out) {
  std::vector<std::vector<int>> keeps(static_cast<size_t>(classes));
  std::vector<std::vector<float>> class_scores(static_cast<size_t>(classes));
  int64_t total = 0;
  for (int64_t j = 1; j < classes; ++j) {
    std::vector<float>& s = class_scores[j];
    std::vector<int> candidates;
    for (int64_t i = 0; i < rows; ++i) {
      s.push_back(scores[i * classes + a.ScoreColumn(j)]);
      if (s.back() > a.score_thresh) candidates.push_back(static_cast<int>(i));
    }
    const detection::BoxList class_boxes{boxes + a.BoxColumn(j) * 4, box_width};
    keeps[j] = a.soft_nms ? detection::SoftNms(class_boxes, &s, candidates, a.soft, a.plus_one)
                          : detection::Nms(
                                class_boxes, detection::OrderByScore(s.data(), candidates), a.nms,
                                a.detections_per_im > 0 ? a.detections_per_im : -1, a.plus_one);
    total += static_cast<int64_t>(keeps[j].size());
  }
  if (a.detections_per_im > 0 && total > a.detections_per_im) {
    std::vector<std::pair<int, int>> all;  // (class, row)
    for (int64_t j = 1; j < classes; ++j) {
      for (int i : keeps[j]) all.emplace_back(static_cast<int>(j), i);
    }
    std::stable_sort(all.begin(), all.end(), [&](const auto& l, const auto& r) {
      return class_scores[l.first][l.second] > class_scores[r.first][r.second];
    });
    for (auto& k : keeps) k.clear();
    for (int64_t k = 0; k < a.detections_per_im; ++k) keeps[all[k].first].push_back(all[k].second);
    total = a.detections_per_im;
  }
  for (int64_t j = 0; j < classes; ++j) {
    for (int i : keeps[j]) {
      const float* box = boxes + i * box_width + a.BoxColumn(j) * 4;
      out->scores.push_back(class_scores[j][i]);
      out->boxes.insert(out->boxes.end(), box, box + 4);
      out->classes.push_back(static_cast<float>(j - (a.classes_include_bg ? 0 : 1)));
      out->keeps.push_back(i);
    }
    out->keeps_size.push_back(static_cast<int32_t>(keeps[j].size()));
  }
  out->batch_splits.push_back(static_cast<int32_t>(total));
}

template <typename T>
void WriteOutput(OperatorBase* op, int index, std::vector<int64_t> dims, const std::vector<T>& v) {
  T* p = op->Output(index, DTypeOf<T>(), std::move(dims))->template mutable_data<T>();
  std::copy(v.begin(), v.end(), p);
}

}  // namespace

void BoxWithNMSLimitOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  if (InputSize() > 2) CheckInputType(*this, 2, {DType::kFloat32, DType::kInt32});
  const NmsLimitArgs a = ReadNmsLimitArgs(def());
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  const auto [images, classes] = CheckNmsLimitShapes(def(), a, in);
  const int64_t rows = in[0].dims[0], box_width = Rows(in[1])[1];
  const std::vector<int64_t> splits = ReadBatchSplits(*this, rows);
  Detections d;
  int64_t offset = 0;
  for (int64_t rows_b : splits) {
    DetectImage(a, Input(0).data<float>() + offset * classes,
                Input(1).data<float>() + offset * box_width, rows_b, classes, box_width, &d);
    offset += rows_b;
  }
  const auto n = static_cast<int64_t>(d.scores.size());
  WriteOutput(this, 0, {n}, d.scores);
  WriteOutput(this, 1, {n, 4}, d.boxes);
  WriteOutput(this, 2, {n}, d.classes);
  if (OutputSize() > 3) {
    WriteOutput(this, 3, {images},
                std::vector<float>(d.batch_splits.begin(), d.batch_splits.end()));
  }
  if (OutputSize() > 4) {
    WriteOutput(this, 4, {n}, d.keeps);
    WriteOutput(this, 5, {images, classes}, d.keeps_size);
  }
}

BRAID_OPERATOR_SCHEMA(BoxWithNMSLimit)
    .NumInputs(2, 3)
    .NumOutputs(3, 6)
    .Arg("score_thresh", ArgKind::kFloat)
    .Arg("nms", ArgKind::kFloat)
    .Arg("detections_per_im", ArgKind::kInt)
    .Arg("soft_nms_enabled", ArgKind::kInt)
    .Arg("soft_nms_method", ArgKind::kString)
    .Arg("soft_nms_sigma", ArgKind::kFloat)
    .Arg("soft_nms_min_score_thres", ArgKind::kFloat)
    .Arg("rotated", ArgKind::kInt)
    .Arg("cls_agnostic_bbox_reg", ArgKind::kInt)
    .Arg("input_boxes_include_bg_cls", ArgKind::kInt)
    .Arg("output_classes_include_bg_cls", ArgKind::kInt)
    .Arg("legacy_plus_one", ArgKind::kInt)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() < 2 || in.size() > 3) return std::vector<ShapeInfo>{};  // OpSchema::Verify
      const auto [images, classes] = CheckNmsLimitShapes(def, ReadNmsLimitArgs(def), in);
      // The number of detections depends on the scores: unknown until the op runs.
      std::vector<ShapeInfo> out{
          {DType::kFloat32, {}, false}, {DType::kFloat32, {}, false},
          {DType::kFloat32, {}, false}, {DType::kFloat32, {images}, true},
          {DType::kInt32, {}, false},   {DType::kInt32, {images, classes}, true}};
      out.resize(static_cast<size_t>(def.output_size()));
      return out;
    })
    .SetDoc(
        "Per-class NMS and a per-image limit: scores [R,C], boxes [R,4C], optional batch_splits "
        "-> scores [n], boxes [n,4], classes [n], optional batch_splits [B], keeps [n], "
        "keeps_size [B,C]. Args: score_thresh 0.05, nms 0.3, detections_per_im 100, "
        "soft_nms_enabled 0, legacy_plus_one 1.");

BRAID_REGISTER_CPU_OPERATOR(BoxWithNMSLimit, BoxWithNMSLimitOp);
BRAID_NO_GRADIENT(BoxWithNMSLimit);

}  // namespace braid
