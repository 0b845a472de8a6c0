#include "runtime/models/host_fills.h"

#include <utility>

#include "planner/op_seed.h"
#include "runtime/core/argument.h"
#include "runtime/core/device.h"
#include "runtime/core/op_schema.h"

namespace braid {

bool IsRandomFill(const std::string& type) {
  return type == "GaussianFill" || type == "MSRAFill" || type == "XavierFill" ||
         type == "UniformFill" || type == "UniformIntFill";
}

std::vector<std::string> MoveRandomFillsToHost(NetDef* init) {
  std::vector<std::string> staged;
  NetDef rewritten = *init;
  rewritten.clear_op();
  for (const OperatorDef& op : init->op()) {
    const bool on_device = !DeviceFromProto(op.device_option()).is_host();
    if (!IsRandomFill(op.type()) || !on_device || op.input_size() > 0) {
      *rewritten.add_op() = op;
      continue;
    }
    OperatorDef fill = op;
    SetIntArg(&fill, kSeedArg, static_cast<int64_t>(OpSeed(op)));
    fill.clear_device_option();
    std::vector<OperatorDef> copies;
    for (std::string& blob : *fill.mutable_output()) {
      OperatorDef copy;
      copy.set_type("CopyCPUToGPU");
      copy.add_input("host/" + blob);
      copy.add_output(blob);
      *copy.mutable_device_option() = op.device_option();
      copies.push_back(std::move(copy));
      blob = "host/" + blob;
      staged.push_back(blob);
    }
    *rewritten.add_op() = std::move(fill);
    for (OperatorDef& copy : copies) *rewritten.add_op() = std::move(copy);
  }
  *init = std::move(rewritten);
  return staged;
}

}  // namespace braid
