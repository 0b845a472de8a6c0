#include "ops/collective/allreduce_gloo_op.h"

#include <limits>

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/argument.h"
#include "runtime/op_registry.h"

namespace braid {
namespace {

std::string Label(const OperatorDef& def) {
  return "Allreduce '" + (def.name().empty() ? def.output(0) : def.name()) + "' (engine GLOO)";
}

}  // namespace

uint32_t DefaultCollectiveTag(const std::string& name) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

AllreduceGlooOp::AllreduceGlooOp(const OperatorDef& def, Workspace* ws) : OperatorBase(def, ws) {
  const int64_t tag = args().Get<int64_t>("tag", DefaultCollectiveTag(def.output(0)));
  if (tag < 0 || tag > std::numeric_limits<uint32_t>::max()) {
    ThrowInvalidArgument(Label(def) + ": tag " + std::to_string(tag) + " is outside [0, 2^32)");
  }
  tag_ = static_cast<uint32_t>(tag);
  Status s = ParseAllreduceAlgorithm(args().Get<std::string>("algorithm", "ring"), &algorithm_);
  if (!s.ok()) ThrowInvalidArgument(Label(def) + ": " + s.message());
  average_ = args().Get<int64_t>("average", 0) != 0;
}

void AllreduceGlooOp::SumLocally() {
  const int n = InputSize();
  for (int i = 0; i < n; ++i) {
    CheckInputType(*this, i, {DType::kFloat32});
    if (Input(i).shape() != Input(0).shape()) {
      ThrowInvalidArgument("input " + DescribeInput(*this, i) + " must have the shape of input " +
                           DescribeInput(*this, 0));
    }
    if (!Input(i).device().is_host()) {
      ThrowInvalidArgument(Label(def()) + ": input " + DescribeInput(*this, i) +
                           " is not in host memory");
    }
  }
  if (n == 1) return;
  float* sum = Output(0)->mutable_data<float>();  // in place: input 0
  std::vector<const float*> in(n);
  for (int i = 1; i < n; ++i) in[i] = Input(i).data<float>();
  const float* const* others = in.data();
  ParallelFor(Input(0).numel(), [=](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      float s = sum[k];
      for (int i = 1; i < n; ++i) s += others[i][k];
      sum[k] = s;
    }
  });
}

void AllreduceGlooOp::Broadcast(float scale) {
  const int n = InputSize();
  std::vector<float*> out(n);
  for (int i = 0; i < n; ++i) out[i] = Output(i)->mutable_data<float>();
  float* const* outs = out.data();
  const bool scaled = scale != 1.f;
  ParallelFor(Input(0).numel(), [=](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const float v = scaled ? outs[0][k] * scale : outs[0][k];
      for (int i = 0; i < n; ++i) outs[i][k] = v;
    }
  });
}

void AllreduceGlooOp::Run() {
  ProcessGroup* group = CurrentProcessGroup();
  if (group == nullptr) {
    throw Error(Status::FailedPrecondition(
        Label(def()) + " needs a process group: none is set (braid::SetProcessGroup)"));
  }
  SumLocally();
  float* data = Output(0)->mutable_data<float>();
  Status s = group->AllreduceSum(data, static_cast<size_t>(Input(0).numel()), tag_, algorithm_);
  if (!s.ok()) throw Error(Status(s.code(), Label(def()) + ": " + s.message()));
  const int replicas = InputSize() * group->size();
  Broadcast(average_ ? 1.f / static_cast<float>(replicas) : 1.f);
}

BRAID_REGISTER_OPERATOR(Allreduce, kCpu, "GLOO", AllreduceGlooOp);

}  // namespace braid
