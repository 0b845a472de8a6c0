#include "runtime/models/net_model.h"

#include <map>
#include <set>
#include <vector>

#include "braid/status.h"
#include "planner/op_seed.h"
#include "runtime/core/op_label.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

[[noreturn]] void ThrowInvalid(const std::string& message) {
  throw Error(Status::InvalidArgument(message));
}

std::string NetLabel(const NetDef& net, const char* role) {
  return std::string(role) + " net '" + net.name() + "'";
}

std::string Logits(const NetModel& m) {
  if (!m.logits.empty()) return m.logits;
  if (m.forward.external_output_size() != 1) {
    ThrowInvalid(NetLabel(m.forward, "forward") + " names no logits blob: set the logits blob " +
                 "or list exactly one external_output (it lists " +
                 std::to_string(m.forward.external_output_size()) + ")");
  }
  return m.forward.external_output(0);
}

// The blobs the init net writes, in order, without repeats.
std::vector<std::string> InitBlobs(const NetDef& init) {
  std::vector<std::string> blobs;
  std::set<std::string> seen;
  for (const OperatorDef& op : init.op()) {
    for (const std::string& out : op.output()) {
      if (seen.insert(out).second) blobs.push_back(out);
    }
  }
  return blobs;
}

// Every forward input is the images, a parameter or an earlier op's output; the images and every
// parameter are read; the logits are written.
void CheckNetModel(const NetModel& m) {
  const std::string logits = Logits(m);
  const std::vector<std::string> params = InitBlobs(m.init);
  std::set<std::string> written(params.begin(), params.end());
  written.insert(m.input);
  std::set<std::string> read;
  for (int i = 0; i < m.forward.op_size(); ++i) {
    const OperatorDef& op = m.forward.op(i);
    for (const std::string& in : op.input()) {
      if (written.count(in) == 0) {
        ThrowInvalid(OpLabelOf(m.forward, i) + " reads '" + in + "', which neither " +
                     NetLabel(m.init, "the init") + " fills nor an earlier op writes");
      }
      read.insert(in);
    }
    written.insert(op.output().begin(), op.output().end());
  }
  if (read.count(m.input) == 0) {
    ThrowInvalid(NetLabel(m.forward, "forward") + " does not read the input blob '" + m.input +
                 "'");
  }
  if (written.count(logits) == 0 || logits == m.input) {
    ThrowInvalid(NetLabel(m.forward, "forward") + " does not write its logits blob '" + logits +
                 "'");
  }
  for (const std::string& p : params) {
    if (read.count(p) == 0) {
      ThrowInvalid(NetLabel(m.init, "init") + " fills '" + p + "', which " +
                   NetLabel(m.forward, "forward") + " does not read");
    }
  }
}

ParamKind KindOf(const NetModel& m, const std::string& param) {
  bool weight = false;
  for (const OperatorDef& op : m.forward.op()) {
    for (const std::string& out : op.output()) {
      if (out == param) return ParamKind::kState;
    }
    const bool weighted = op.type() == "Conv" || op.type() == "ConvTranspose" || op.type() == "FC";
    if (weighted && op.input_size() > 1 && op.input(1) == param) weight = true;
  }
  return weight ? ParamKind::kWeight : ParamKind::kBias;
}

// `op` on the builder's device. A seed its own device option gave it becomes an argument first.
void PlaceOn(const ModelBuilder& b, OperatorDef* op) {
  if (b.options().device.ByteSizeLong() == 0) return;
  if (HasExplicitSeed(*op)) SetIntArg(op, "seed", static_cast<int64_t>(OpSeed(*op)));
  *op->mutable_device_option() = b.options().device;
}

// The init net's ops into the model's init net, and its blobs into the model's parameters.
void AddParams(const NetModel& m, ModelBuilder* b) {
  const std::map<std::string, ShapeInfo> shapes = InferBlobShapes(m.init, {});
  for (const std::string& name : InitBlobs(m.init)) {
    const auto shape = shapes.find(name);
    if (shape == shapes.end() || !shape->second.known) {
      ThrowInvalid(NetLabel(m.init, "init") + ": the shape of '" + name + "' cannot be inferred " +
                   "(give its fill a shape argument)");
    }
    b->params()->params.push_back({name, shape->second.dims, KindOf(m, name)});
  }
  for (const OperatorDef& op : m.init.op()) {
    OperatorDef* added = b->params()->init_net.add_op();
    *added = op;
    PlaceOn(*b, added);
  }
}

bool TakesIsTest(const OperatorDef& op) {
  const OpSchema* schema = FindSchema(op.type());
  return schema != nullptr && schema->accepted_args().Find("is_test") != nullptr;
}

std::string AppendForward(const NetModel& m, const std::string& logits, ModelBuilder* b,
                          const std::string& data) {
  ModelParams* params = b->params();
  if (params->Find(InitBlobs(m.init).at(0)) == nullptr) AddParams(m, b);
  auto rename = [&](std::string* blob) {
    if (*blob == m.input) {
      *blob = data;
    } else if (params->Find(*blob) == nullptr) {
      *blob = b->Blob(*blob);
    }
  };
  for (const OperatorDef& op : m.forward.op()) {
    OperatorDef* added = b->net()->add_op();
    *added = op;
    if (b->options().is_test && TakesIsTest(op)) {
      SetIntArg(added, "is_test", 1);
      if (added->output_size() > 1) {
        added->mutable_output()->DeleteSubrange(1, added->output_size() - 1);
      }
    }
    for (std::string& in : *added->mutable_input()) rename(&in);
    for (std::string& out : *added->mutable_output()) rename(&out);
    for (std::string& in : *added->mutable_control_input()) rename(&in);
    PlaceOn(*b, added);
  }
  return b->Blob(logits);
}

}  // namespace

std::string NetModelName(const NetModel& model) {
  return model.forward.name().empty() ? "model" : model.forward.name();
}

std::function<std::string(ModelBuilder*, const std::string& data)> NetModelForward(
    const NetModel& model) {
  if (model.init.op_size() == 0) {
    ThrowInvalid(NetLabel(model.init, "init") + " fills no parameter");
  }
  CheckNetModel(model);
  const std::string logits = Logits(model);
  return [model, logits](ModelBuilder* b, const std::string& data) {
    return AppendForward(model, logits, b, data);
  };
}

}  // namespace braid
