#include "runtime/exec/net_args.h"

#include <string>

#include "braid/status.h"
#include "runtime/core/argument.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

const char kThreadsRange[] = "0 to 1024";
static_assert(kMaxNetThreads == 1024, "update kThreadsRange");

[[noreturn]] void Fail(const NetDef& net, const std::string& what) {
  throw Error(Status::InvalidArgument("net '" + net.name() + "': " + what));
}

}  // namespace

const std::vector<ArgSpec>& NetArgSpecs() {
  static const auto* specs = new std::vector<ArgSpec>{
      {kNumWorkersArg, ArgKind::kInt, 0, kMaxNetThreads,
       std::string(kThreadsRange) + "; 0: one worker per hardware thread"},
      {kFirstIterOnlyOneWorkerArg, ArgKind::kInt, 0, 1, "0 or 1"},
      {kIntraOpThreadsArg, ArgKind::kInt, 0, kMaxNetThreads,
       std::string(kThreadsRange) + "; 0: the executor shares the cores out"},
      {kStrictArgsArg, ArgKind::kInt, 0, 1, "0 or 1"},
  };
  return *specs;
}

void CheckNetArgs(const NetDef& net) {
  AcceptedArgs accepted;
  accepted.groups.push_back(&NetArgSpecs());
  const std::string problem = CheckArguments(net.arg(), accepted);
  if (!problem.empty()) Fail(net, problem);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (net.has_num_workers() && (net.num_workers() < 0 || net.num_workers() > kMaxNetThreads)) {
    Fail(net, "field num_workers = " + std::to_string(net.num_workers()) +
                  " is out of range (valid: " + NetArgSpecs()[0].range_doc + ")");
  }
#pragma GCC diagnostic pop
}

bool FirstRunIsSingleThreaded(const NetDef& net) {
  bool needs = false;
  for (const OperatorDef& op : net.op()) {
    const OpSchema* schema = FindSchema(op.type());
    needs |= schema != nullptr && (schema->is_collective() || schema->allocates_lazily());
  }
  return ArgumentReader(net.arg()).Get<bool>(kFirstIterOnlyOneWorkerArg, needs);
}

}  // namespace braid
