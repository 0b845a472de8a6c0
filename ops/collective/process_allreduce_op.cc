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

std::set<std::pair<int, int>> EachInputInPlace() {
  std::set<std::pair<int, int>> pairs;
  for (int i = 0; i < kMaxInputs; ++i) pairs.insert({i, i});
  return pairs;
}

}  // namespace

std::string ProcessAllreduceNcclKey(uint32_t tag) {
  return "ProcessAllreduce tag " + std::to_string(tag);
}

std::string ProcessAllreduceLabel(const OperatorDef& def) {
  return "ProcessAllreduce '" + (def.name().empty() ? def.output(0) : def.name()) + "'";
}

ProcessAllreduceArgs ReadProcessAllreduceArgs(const OperatorDef& def) {
  const ArgumentReader args(def.arg());
  const std::string label = ProcessAllreduceLabel(def);
  ProcessAllreduceArgs a;
  const int64_t tensors = args.Get<int64_t>("tensors", 1);
  if (tensors < 1 || def.input_size() % tensors != 0) {
    ThrowInvalidArgument(label + ": tensors " + std::to_string(tensors) +
                         " must be at least 1 and divide the " + std::to_string(def.input_size()) +
                         " inputs");
  }
  a.tensors = static_cast<int>(tensors);
  a.replicas = def.input_size() / a.tensors;
  const int64_t tag = args.Get<int64_t>("tag", DefaultCollectiveTag(def.output(0)));
  if (tag < 0 || tag >= kFirstReservedTag) {
    ThrowInvalidArgument(label + ": tag " + std::to_string(tag) +
                         " is outside [0, 2^32 - 2^16) (the tags above are braid's own)");
  }
  a.tag = static_cast<uint32_t>(tag);
  Status s = ParseAllreduceAlgorithm(args.Get<std::string>("algorithm", "ring"), &a.algorithm);
  if (!s.ok()) ThrowInvalidArgument(label + ": " + s.message());
  a.average = args.Get<int64_t>("average", 0) != 0;
  const int64_t weight = args.Get<int64_t>("weight", a.replicas);
  if (weight < 1 || weight > kMaxWeights) {
    ThrowInvalidArgument(label + ": weight " + std::to_string(weight) + " is outside [1, 2^24]");
  }
  a.weight = static_cast<int>(weight);
  return a;
}

ProcessAllreduceOp::ProcessAllreduceOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), a_(ReadProcessAllreduceArgs(def)) {}

void ProcessAllreduceOp::CheckInputs() const {
  for (int i = 0; i < InputSize(); ++i) {
    if (!Input(i).device().is_host()) {
      ThrowInvalidArgument("input " + DescribeInput(*this, i) + " is on " +
                           Input(i).device().ToString() +
                           ": the cpu engine (Gloo) reduces host tensors; a ProcessAllreduce of "
                           "cuda tensors runs on a cuda device (NCCL)");
    }
    CheckInputType(*this, i, {DType::kFloat32});
    const int first = i % a_.tensors;  // the same tensor on replica 0
    if (Input(i).shape() != Input(first).shape()) {
      ThrowInvalidArgument("input " + DescribeInput(*this, i) + " must have the shape of input " +
                           DescribeInput(*this, first));
    }
  }
}

void ProcessAllreduceOp::SumLocally() {
  if (a_.replicas == 1) return;
  std::vector<const float*> in(a_.replicas);
  for (int b = 0; b < a_.tensors; ++b) {
    for (int r = 0; r < a_.replicas; ++r) in[r] = Input(r * a_.tensors + b).data<float>();
    float* sum = Output(b)->mutable_data<float>();  // in place: replica 0's tensor b
    const float* const* rows = in.data();
    const int replicas = a_.replicas;
    ParallelFor(Input(b).numel(), [=](int64_t begin, int64_t end) {
      PairwiseSumRows(rows, replicas, begin, end, sum);
    });
  }
}

float* ProcessAllreduceOp::Pack(size_t* count) {
  if (a_.tensors == 1 && !a_.average) {  // the plain sum: no copy
    *count = static_cast<size_t>(Input(0).numel());
    return Output(0)->mutable_data<float>();
  }
  int64_t total = 0;
  for (int b = 0; b < a_.tensors; ++b) total += Input(b).numel();
  packed_.resize(static_cast<size_t>(total) + (a_.average ? 1 : 0));  // the first run allocates
  // This rank's share: weight x the mean of its replicas (exactly the sum when they are equal).
  const float scale =
      a_.average ? static_cast<float>(a_.weight) / static_cast<float>(a_.replicas) : 1.f;
  float* at = packed_.data();
  for (int b = 0; b < a_.tensors; ++b) {
    const float* in = Input(b).data<float>();
    if (scale == 1.f) {
      at = std::copy_n(in, Input(b).numel(), at);
    } else {
      at = std::transform(in, in + Input(b).numel(), at, [scale](float v) { return v * scale; });
    }
  }
  if (a_.average) *at = static_cast<float>(a_.weight);  // summed: the weights' sum
  *count = packed_.size();
  return packed_.data();
}

void ProcessAllreduceOp::Unpack(const float* reduced, float scale) {
  std::vector<float*> out(a_.replicas);
  for (int b = 0; b < a_.tensors; ++b) {
    for (int r = 0; r < a_.replicas; ++r)
      out[r] = Output(r * a_.tensors + b)->mutable_data<float>();
    float* const* outs = out.data();
    const int replicas = a_.replicas;
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
  CheckInputs();
  ProcessGroup* group = CurrentProcessGroup();
  if (group == nullptr) {
    throw Error(Status::FailedPrecondition(
        ProcessAllreduceLabel(def()) +
        " needs a process group: none is connected (braid::ConnectProcessGroup)"));
  }
  if (a_.average && a_.weight * int64_t{group->size()} > kMaxWeights) {
    throw Error(Status::InvalidArgument(ProcessAllreduceLabel(def()) + ": weight " +
                                        std::to_string(a_.weight) + " x " +
                                        std::to_string(group->size()) +
                                        " ranks may add up to more than 2^24, the most a float "
                                        "counts exactly"));
  }
  SumLocally();
  size_t count = 0;
  float* data = Pack(&count);
  Status s = group->AllreduceSum(data, count, a_.tag, a_.algorithm);
  if (!s.ok()) throw Error(Status(s.code(), ProcessAllreduceLabel(def()) + ": " + s.message()));
  // The weighted mean: the buffer's last element summed the ranks' weights.
  Unpack(data, a_.average ? 1.f / data[count - 1] : 1.f);
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
    .InputsOn(BlobPlace::kAnyDevice)  // each replica's on its device: host (Gloo) or cuda (NCCL)
    .OutputsOn(BlobPlace::kAnyDevice)
    .WaitsForOtherProcesses()
    .SetDoc(
        "Tensors (arg `tensors` per local replica, replica-major) all-reduced across the "
        "processes of the job in one collective: each becomes the sum over replicas and "
        "processes, or the mean with average=1; in place. Engines: Gloo for host tensors, NCCL "
        "for cuda tensors");

BRAID_REGISTER_CPU_OPERATOR(ProcessAllreduce, ProcessAllreduceOp);
BRAID_NO_GRADIENT(ProcessAllreduce);

}  // namespace braid
