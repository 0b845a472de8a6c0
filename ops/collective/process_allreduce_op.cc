#include "ops/collective/process_allreduce_op.h"

#include <algorithm>
#include <set>

#include "ops/collective/pairwise_sum.h"
#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/exec/process_collective_order.h"

namespace braid {
namespace {

constexpr int kMaxInputs = 4096;
constexpr int64_t kMaxWeights = int64_t{1} << 24;  // the weights' sum travels as an exact float

std::string Label(const OperatorDef& def) {
  return "ProcessAllreduce '" + (def.name().empty() ? def.output(0) : def.name()) + "'";
}

std::set<std::pair<int, int>> EachInputInPlace() {
  std::set<std::pair<int, int>> pairs;
  for (int i = 0; i < kMaxInputs; ++i) pairs.insert({i, i});
  return pairs;
}

}  // namespace

ProcessAllreduceOp::ProcessAllreduceOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws) {
  const int64_t tensors = args().Get<int64_t>("tensors", 1);
  if (tensors < 1 || def.input_size() % tensors != 0) {
    ThrowInvalidArgument(Label(def) + ": tensors " + std::to_string(tensors) +
                         " must be at least 1 and divide the " +
                         std::to_string(def.input_size()) + " inputs");
  }
  tensors_ = static_cast<int>(tensors);
  replicas_ = def.input_size() / tensors_;
  const int64_t tag = args().Get<int64_t>("tag", DefaultCollectiveTag(def.output(0)));
  if (tag < 0 || tag >= kFirstReservedTag) {
    ThrowInvalidArgument(Label(def) + ": tag " + std::to_string(tag) +
                         " is outside [0, 2^32 - 2^16) (the tags above are braid's own)");
  }
  tag_ = static_cast<uint32_t>(tag);
  Status s = ParseAllreduceAlgorithm(args().Get<std::string>("algorithm", "ring"), &algorithm_);
  if (!s.ok()) ThrowInvalidArgument(Label(def) + ": " + s.message());
  average_ = args().Get<int64_t>("average", 0) != 0;
  const int64_t weight = args().Get<int64_t>("weight", replicas_);
  if (weight < 1 || weight > kMaxWeights) {
    ThrowInvalidArgument(Label(def) + ": weight " + std::to_string(weight) +
                         " is outside [1, 2^24]");
  }
  weight_ = static_cast<int>(weight);
}

void ProcessAllreduceOp::SumLocally() {
  for (int i = 0; i < InputSize(); ++i) {
    CheckInputType(*this, i, {DType::kFloat32});
    const int first = i % tensors_;  // the same tensor on replica 0
    if (Input(i).shape() != Input(first).shape()) {
      ThrowInvalidArgument("input " + DescribeInput(*this, i) + " must have the shape of input " +
                           DescribeInput(*this, first));
    }
  }
  if (replicas_ == 1) return;
  std::vector<const float*> in(replicas_);
  for (int b = 0; b < tensors_; ++b) {
    for (int r = 0; r < replicas_; ++r) in[r] = Input(r * tensors_ + b).data<float>();
    float* sum = Output(b)->mutable_data<float>();  // in place: replica 0's tensor b
    const float* const* rows = in.data();
    const int replicas = replicas_;
    ParallelFor(Input(b).numel(), [=](int64_t begin, int64_t end) {
      PairwiseSumRows(rows, replicas, begin, end, sum);
    });
  }
}

float* ProcessAllreduceOp::Pack(size_t* count) {
  if (tensors_ == 1 && !average_) {  // the plain sum: no copy
    *count = static_cast<size_t>(Input(0).numel());
    return Output(0)->mutable_data<float>();
  }
  int64_t total = 0;
  for (int b = 0; b < tensors_; ++b) total += Input(b).numel();
  packed_.resize(static_cast<size_t>(total) + (average_ ? 1 : 0));  // the first run allocates
  // This rank's share: weight x the mean of its replicas (exactly the sum when they are equal).
  const float scale = average_ ? static_cast<float>(weight_) / static_cast<float>(replicas_) : 1.f;
  float* at = packed_.data();
  for (int b = 0; b < tensors_; ++b) {
    const float* in = Input(b).data<float>();
    if (scale == 1.f) {
      at = std::copy_n(in, Input(b).numel(), at);
    } else {
      at = std::transform(in, in + Input(b).numel(), at, [scale](float v) { return v * scale; });
    }
  }
  if (average_) *at = static_cast<float>(weight_);  // summed: the weights' sum
  *count = packed_.size();
  return packed_.data();
}

void ProcessAllreduceOp::Unpack(const float* reduced, float scale) {
  std::vector<float*> out(replicas_);
  for (int b = 0; b < tensors_; ++b) {
    for (int r = 0; r < replicas_; ++r) out[r] = Output(r * tensors_ + b)->mutable_data<float>();
    float* const* outs = out.data();
    const int replicas = replicas_;
    ParallelFor(Input(b).numel(), [=](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const float v = reduced[k] * scale;
        for (int r = 0; r < replicas; ++r) outs[r][k] = v;
      }
    });
    reduced += Input(b).numel();
  }
}

void ProcessAllreduceOp::Run() {
  ProcessGroup* group = CurrentProcessGroup();
  if (group == nullptr) {
    throw Error(Status::FailedPrecondition(
        Label(def()) + " needs a process group: none is set (braid::SetProcessGroup)"));
  }
  if (average_ && weight_ * int64_t{group->size()} > kMaxWeights) {
    throw Error(Status::InvalidArgument(
        Label(def()) + ": weight " + std::to_string(weight_) + " x " +
        std::to_string(group->size()) + " ranks may add up to more than 2^24, the most a float "
        "counts exactly"));
  }
  SumLocally();
  size_t count = 0;
  float* data = Pack(&count);
  Status s = group->AllreduceSum(data, count, tag_, algorithm_);
  if (!s.ok()) throw Error(Status(s.code(), Label(def()) + ": " + s.message()));
  // The weighted mean: the buffer's last element summed the ranks' weights.
  Unpack(data, average_ ? 1.f / data[count - 1] : 1.f);
}

BRAID_OPERATOR_SCHEMA(ProcessAllreduce)
    .Arg("tensors", ArgKind::kInt)
    .Arg("tag", ArgKind::kInt)
    .Arg("algorithm", ArgKind::kString)
    .Arg("average", ArgKind::kInt)
    .Arg("weight", ArgKind::kInt)
    .NumInputs(1, kMaxInputs)
    .NumOutputs(1, kMaxInputs)
    .EnforceInplace(EachInputInPlace())
    .TensorInference([](const OperatorDef&, const std::vector<ShapeInfo>& in) { return in; })
    .InputsOn(BlobPlace::kHost)
    .OutputsOn(BlobPlace::kHost)
    .WaitsForOtherProcesses()
    .SetDoc(
        "Tensors (arg `tensors` per local replica, replica-major) all-reduced across the "
        "processes of the job with Gloo in one collective: each becomes the sum over replicas and "
        "processes, or the mean with average=1; in place.");

BRAID_REGISTER_CPU_OPERATOR(ProcessAllreduce, ProcessAllreduceOp);
BRAID_NO_GRADIENT(ProcessAllreduce);

}  // namespace braid
