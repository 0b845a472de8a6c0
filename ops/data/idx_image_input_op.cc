#include "ops/data/idx_image_input_op.h"

#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/data/reader_args.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

// The arguments that fix the output shapes; shape inference and the kernel share them.
struct BatchShape {
  int64_t batch_size = 0;
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;

  std::vector<int64_t> data_dims() const { return {batch_size, channels, height, width}; }
};

BatchShape ReadBatchShape(const OperatorDef& def) {
  const ArgumentReader args(def.arg());
  if (!args.Has("batch_size")) ThrowInvalidArgument("argument 'batch_size' is required");
  BatchShape s;
  s.batch_size = args.Get<int64_t>("batch_size", 0);
  s.channels = args.Get<int64_t>("channels", 1);
  s.height = args.Get<int64_t>("height", 28);
  s.width = args.Get<int64_t>("width", 28);
  if (s.batch_size <= 0 || s.channels <= 0 || s.height <= 0 || s.width <= 0) {
    ThrowInvalidArgument("batch_size, channels, height and width must be positive, got " +
                         DimsText(s.data_dims()));
  }
  return s;
}

std::shared_ptr<const LabeledImages> LoadImages(const OperatorDef& def, const BatchShape& shape) {
  const ArgumentReader args(def.arg());
  const int num_classes = args.Get<int>("num_classes", 10);
  if (args.Get<bool>("synthetic", false)) {
    SyntheticImagesSpec spec;
    spec.count = args.Get<int64_t>("synthetic_examples", 1024);
    spec.channels = shape.channels;
    spec.height = shape.height;
    spec.width = shape.width;
    spec.num_classes = num_classes;
    spec.seed = static_cast<uint64_t>(args.Get<int64_t>("seed", 0));
    return std::make_shared<const LabeledImages>(MakeSyntheticImages(spec));
  }
  const std::string images = args.Get<std::string>("images", "");
  const std::string labels = args.Get<std::string>("labels", "");
  if (images.empty() || labels.empty()) {
    ThrowInvalidArgument(
        "arguments 'images' and 'labels' (IDX file paths) are required unless "
        "'synthetic' is 1");
  }
  auto set = std::make_shared<const LabeledImages>(LoadIdxImages(images, labels, num_classes));
  if (set->channels != shape.channels || set->height != shape.height || set->width != shape.width) {
    ThrowInvalidArgument("IDX file '" + images + "' holds images of shape " +
                         DimsText({set->channels, set->height, set->width}) +
                         " but the op's channels/height/width arguments say " +
                         DimsText({shape.channels, shape.height, shape.width}));
  }
  return set;
}

BatchPrefetcher::Options PrefetchOptions(const OperatorDef& def, const BatchShape& shape) {
  BatchPrefetcher::Options o =
      ReaderPrefetchOptions(def, shape.batch_size, /*shuffle_default=*/true);
  const ArgumentReader args(def.arg());
  o.mean = args.Get<float>("mean", 0.f);
  o.std = args.Get<float>("std", 1.f);
  return o;
}

}  // namespace

IdxImageInputOp::IdxImageInputOp(const OperatorDef& def, Workspace* ws) : OperatorBase(def, ws) {
  const BatchShape shape = ReadBatchShape(def);
  data_dims_ = shape.data_dims();
  prefetcher_ =
      std::make_unique<BatchPrefetcher>(LoadImages(def, shape), PrefetchOptions(def, shape));
}

void IdxImageInputOp::Run() {
  float* data = Output(0, DType::kFloat32, data_dims_)->mutable_data<float>();
  int32_t* labels = Output(1, DType::kInt32, {data_dims_[0]})->mutable_data<int32_t>();
  prefetcher_->NextBatch(data, labels);
}

BRAID_OPERATOR_SCHEMA(IdxImageInput)
    .Args(ReaderArgSpecs())
    .Arg("images", ArgKind::kString)
    .Arg("labels", ArgKind::kString)
    .Arg("channels", ArgKind::kInt)
    .Arg("height", ArgKind::kInt)
    .Arg("width", ArgKind::kInt)
    .Arg("num_classes", ArgKind::kInt)
    .Arg("synthetic", ArgKind::kInt)
    .Arg("synthetic_examples", ArgKind::kInt)
    .Arg("mean", ArgKind::kFloat)
    .Arg("std", ArgKind::kFloat)
    .NumInputs(0)
    .NumOutputs(2)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>&) {
      const BatchShape s = ReadBatchShape(def);
      return std::vector<ShapeInfo>{{DType::kFloat32, s.data_dims(), true},
                                    {DType::kInt32, {s.batch_size}, true}};
    })
    .HostOnly()
    .SetDoc(
        "Batches of an IDX image data set (or synthetic images), decoded on a background "
        "thread: data float32 [N,C,H,W], label int32 [N].");

BRAID_REGISTER_CPU_OPERATOR(IdxImageInput, IdxImageInputOp);

}  // namespace braid
