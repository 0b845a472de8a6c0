#include "runtime/train/model_export.h"

#include <set>
#include <string>

#include "braid/status.h"
#include "runtime/io/checkpoint.h"

namespace braid {
namespace {

// A GivenTensor*Fill writing `blob` with `tensor`'s values.
OperatorDef FillOf(const std::string& blob, const Tensor& tensor) {
  const TensorProto values = ToTensorProto(blob, tensor);
  OperatorDef op;
  op.add_output(blob);
  AddIntsArg(&op, "shape", {values.dims().begin(), values.dims().end()});
  Argument* arg = op.add_arg();
  arg->set_name("values");
  switch (tensor.dtype()) {
    case DType::kFloat32:
      op.set_type("GivenTensorFill");
      *arg->mutable_floats() = values.float_data();
      break;
    case DType::kInt32:
      op.set_type("GivenTensorIntFill");
      arg->mutable_ints()->Add(values.int32_data().begin(), values.int32_data().end());
      break;
    case DType::kInt64:
      op.set_type("GivenTensorInt64Fill");
      *arg->mutable_ints() = values.int64_data();
      break;
    default:
      throw Error(Status::InvalidArgument("export: parameter '" + blob + "' holds " +
                                          DTypeName(tensor.dtype()) +
                                          ", which no GivenTensor*Fill writes"));
  }
  return op;
}

}  // namespace

ModelFolder ExportedModel(const TrainingLoop& loop) {
  const TrainingNets& nets = loop.nets();
  ModelFolder model;
  // The forward pass again, for inference and without the trainer's layouts or device; building
  // it over a copy of the parameters reuses their names and adds none.
  ModelParams params = nets.params;
  NetDef& predict = model.predict_net;
  predict.set_name(nets.train.name().substr(0, nets.train.name().rfind("_train")));
  ModelBuilder builder(&params, &predict, {.is_test = true});
  const std::string logits = loop.forward()(&builder, "data");
  builder.AddOp("Softmax", {logits}, {"softmax"});
  if (params.params.size() != nets.params.params.size()) {  // the test net's check
    throw Error(Status::InvalidArgument("export: the forward pass creates parameter '" +
                                        params.params[nets.params.params.size()].name +
                                        "', which the trainer does not have"));
  }

  std::set<std::string> read;
  for (const OperatorDef& op : predict.op()) read.insert(op.input().begin(), op.input().end());
  predict.add_external_input("data");
  model.init_net.set_name(predict.name() + "_init");
  for (const ParamInfo& p : nets.params.params) {
    if (read.count(p.name) == 0) continue;
    const Tensor* value = loop.workspace().GetBlob(nets.OnDevice(0, p.name));
    if (value == nullptr) {
      throw Error(Status::NotFound("export: parameter '" + p.name + "' is not in the workspace"));
    }
    *model.init_net.add_op() = FillOf(p.name, *value);
    model.init_net.add_external_output(p.name);
    predict.add_external_input(p.name);
  }
  predict.add_external_output("softmax");
  std::vector<int64_t> shape = {1};
  for (int64_t d : loop.image_dims()) shape.push_back(d);
  model.inputs = {{"data", DType::kFloat32, shape}};
  return model;
}

}  // namespace braid
