#include "ops/collective/allreduce_op.h"

#include "ops/collective/pairwise_sum.h"
#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

constexpr int kMaxDevices = 256;

std::set<std::pair<int, int>> EachInputInPlace() {
  std::set<std::pair<int, int>> pairs;
  for (int i = 0; i < kMaxDevices; ++i) pairs.insert({i, i});
  return pairs;
}

}  // namespace

void RefuseProcessesArgument(const OperatorDef& def) {
  if (ArgumentReader(def.arg()).Get<int64_t>("processes", 0) == 0) return;
  ThrowInvalidArgument(
      "Allreduce reduces this process's devices only; across processes, ProcessAllreduce takes "
      "the same tensors (Gloo for host tensors, NCCL for cuda tensors): drop `processes` and `key` "
      "and name the op ProcessAllreduce");
}

AllreduceOp::AllreduceOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), in_(def.input_size()), out_(def.output_size()) {
  RefuseProcessesArgument(def);
  if (ArgumentReader(def.arg()).Get<int64_t>("average", 0) != 0) {
    scale_ = 1.f / static_cast<float>(def.input_size());
  }
}

void AllreduceOp::Bind(int i) {
  CheckInputType(*this, i, {DType::kFloat32});
  if (Input(i).shape() != Input(0).shape()) {
    ThrowInvalidArgument("input " + DescribeInput(*this, i) + " must have the shape of input " +
                         DescribeInput(*this, 0));
  }
  in_[i] = Input(i).data<float>();
  out_[i] = Output(i)->mutable_data<float>();  // in place: the same tensor
}

void AllreduceOp::Reduce(int64_t begin, int64_t end) {
  const int n = InputSize();
  const float scale = scale_;
  const float* const* in = in_.data();
  float* const* out = out_.data();
  ParallelFor(end - begin, [=](int64_t b, int64_t e) {
    PairwiseSumRows(in, n, begin + b, begin + e, out[0]);  // out[0] is in[0]: in place
    for (int64_t k = begin + b; k < begin + e; ++k) {
      const float sum = out[0][k] * scale;
      for (int i = 0; i < n; ++i) out[i][k] = sum;
    }
  });
}

void AllreduceOp::Run() {
  for (int i = 0; i < InputSize(); ++i) Bind(i);
  Reduce(0, Input(0).numel());
}

std::vector<Device> AllreduceOp::RankDevices() const {
  std::vector<Device> devices;
  for (int i = 0; i < InputSize(); ++i) devices.push_back(Input(i).device());
  return devices;
}

void AllreduceOp::RunRank(int rank, CollectiveRendezvous& peers) {
  Bind(rank);  // each rank binds its own input: in_ and out_ are complete after the barrier
  peers.Arrive(rank, "inputs");
  const int64_t numel = Input(0).numel();
  const int n = peers.size();
  Reduce(numel * rank / n, numel * (rank + 1) / n);
  peers.Arrive(rank, "outputs");
}

BRAID_OPERATOR_SCHEMA(Allreduce)
    .Arg("average", ArgKind::kInt)
    .Arg("processes", ArgKind::kInt)  // refused unless 0: see RefuseProcessesArgument
    .NumInputs(1, kMaxDevices)
    .NumOutputs(1, kMaxDevices)
    .EnforceInplace(EachInputInPlace())
    .IdenticalTypeAndShape()
    .InputsOn(BlobPlace::kAnyDevice)
    .OutputsOn(BlobPlace::kAnyDevice)
    .Collective()
    .SetDoc(
        "Each input (one blob per device) becomes the sum over all inputs, or their mean with "
        "average=1; in place.");

BRAID_REGISTER_CPU_OPERATOR(Allreduce, AllreduceOp);
BRAID_NO_GRADIENT(Allreduce);

}  // namespace braid
