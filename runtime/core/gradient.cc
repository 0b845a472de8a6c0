#include "runtime/core/gradient.h"

#include <map>

#include <glog/logging.h>

namespace braid {
namespace {

std::map<std::string, GradientMaker>& Makers() {
  static auto* makers = new std::map<std::string, GradientMaker>();
  return *makers;
}

}  // namespace

bool RegisterGradient(const std::string& type, GradientMaker maker) {
  bool inserted = Makers().emplace(type, std::move(maker)).second;
  // Invariant: each op type registers one gradient, at static initialisation.
  CHECK(inserted) << "gradient of '" << type << "' registered twice";
  return true;
}

const GradientMaker* FindGradientMaker(const std::string& type) {
  auto it = Makers().find(type);
  return it == Makers().end() ? nullptr : &it->second;
}

OperatorDef MakeGradientOp(const OperatorDef& forward, const std::string& type,
                           const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs) {
  OperatorDef op;
  op.set_type(type);
  if (!forward.name().empty()) op.set_name(forward.name() + "_grad");
  for (const std::string& in : inputs) op.add_input(in);
  for (const std::string& out : outputs) op.add_output(out);
  *op.mutable_arg() = forward.arg();
  if (forward.has_device_option()) *op.mutable_device_option() = forward.device_option();
  if (forward.has_engine()) op.set_engine(forward.engine());
  op.set_is_gradient_op(true);
  return op;
}

}  // namespace braid
