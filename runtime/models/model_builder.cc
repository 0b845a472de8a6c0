#include "runtime/models/model_builder.h"

#include <google/protobuf/text_format.h>

#include "braid/status.h"
#include "runtime/core/dims_text.h"

namespace braid {

int64_t ParamInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const ParamInfo* ModelParams::Find(const std::string& name) const {
  for (const ParamInfo& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

int64_t ModelParams::TrainableCount() const {
  int64_t n = 0;
  for (const ParamInfo& p : params) n += p.trainable() ? p.numel() : 0;
  return n;
}

ModelBuilder::ModelBuilder(ModelParams* params, NetDef* net, Options options)
    : params_(params), net_(net), options_(std::move(options)) {}

OperatorDef* ModelBuilder::AddOp(const std::string& type, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs) {
  OperatorDef* op = net_->add_op();
  op->set_type(type);
  for (const std::string& in : inputs) op->add_input(in);
  for (const std::string& out : outputs) op->add_output(out);
  if (options_.device.ByteSizeLong() > 0) *op->mutable_device_option() = options_.device;
  return op;
}

std::string ModelBuilder::AddParam(const std::string& name, const std::vector<int64_t>& shape,
                                   ParamKind kind, const std::string& fill_type, float value) {
  if (const ParamInfo* existing = params_->Find(name)) {
    if (existing->shape != shape || existing->kind != kind) {
      throw Error(Status::InvalidArgument("model parameter '" + name + "' exists with shape " +
                                          DimsText(existing->shape) + "; a layer of net '" +
                                          net_->name() + "' asks for " + DimsText(shape) +
                                          " (or another kind)"));
    }
    return name;
  }
  OperatorDef* fill = params_->init_net.add_op();
  fill->set_type(fill_type);
  fill->add_output(name);
  if (options_.device.ByteSizeLong() > 0) *fill->mutable_device_option() = options_.device;
  AddIntsArg(fill, "shape", shape);
  if (fill_type == "ConstantFill") AddFloatArg(fill, "value", value);
  params_->params.push_back({name, shape, kind});
  return name;
}

std::string ModelBuilder::Conv(const std::string& in, const std::string& name, int64_t dim_in,
                               int64_t dim_out, int kernel, int stride, int pad, bool bias) {
  std::vector<std::string> inputs = {
      in, AddParam(name + "_w", {dim_out, dim_in, kernel, kernel}, ParamKind::kWeight, "MSRAFill")};
  if (bias) inputs.push_back(AddParam(name + "_b", {dim_out}, ParamKind::kBias, "ConstantFill"));
  OperatorDef* op = AddOp("Conv", inputs, {Blob(name)});
  op->set_name(name);
  AddIntArg(op, "kernel", kernel);
  AddIntArg(op, "stride", stride);
  AddIntArg(op, "pad", pad);
  return Blob(name);
}

std::string ModelBuilder::SpatialBN(const std::string& in, const std::string& name, int64_t dim,
                                    float scale_init) {
  const std::string scale =
      AddParam(name + "_s", {dim}, ParamKind::kBias, "ConstantFill", scale_init);
  const std::string bias = AddParam(name + "_b", {dim}, ParamKind::kBias, "ConstantFill", 0.f);
  const std::string mean = AddParam(name + "_rm", {dim}, ParamKind::kState, "ConstantFill", 0.f);
  const std::string var = AddParam(name + "_riv", {dim}, ParamKind::kState, "ConstantFill", 1.f);
  std::vector<std::string> outputs = {Blob(name)};
  if (!options_.is_test) {
    outputs.insert(outputs.end(), {mean, var, Blob(name + "_sm"), Blob(name + "_siv")});
  }
  OperatorDef* op = AddOp("SpatialBN", {in, scale, bias, mean, var}, outputs);
  op->set_name(name);
  AddIntArg(op, "is_test", options_.is_test ? 1 : 0);
  AddFloatArg(op, "epsilon", options_.bn_epsilon);
  AddFloatArg(op, "momentum", options_.bn_momentum);
  return Blob(name);
}

std::string ModelBuilder::Relu(const std::string& in, const std::string& name) {
  AddOp("Relu", {in}, {Blob(name)})->set_name(name);
  return Blob(name);
}

std::string ModelBuilder::ReluInPlace(const std::string& blob, const std::string& name) {
  AddOp("Relu", {blob}, {blob})->set_name(name);
  return blob;
}

std::string ModelBuilder::MaxPool(const std::string& in, const std::string& name, int kernel,
                                  int stride, int pad) {
  OperatorDef* op = AddOp("MaxPool", {in}, {Blob(name)});
  op->set_name(name);
  AddIntArg(op, "kernel", kernel);
  AddIntArg(op, "stride", stride);
  AddIntArg(op, "pad", pad);
  return Blob(name);
}

std::string ModelBuilder::GlobalAveragePool(const std::string& in, const std::string& name) {
  OperatorDef* op = AddOp("AveragePool", {in}, {Blob(name)});
  op->set_name(name);
  AddIntArg(op, "global_pooling", 1);
  return Blob(name);
}

std::string ModelBuilder::FC(const std::string& in, const std::string& name, int64_t dim_in,
                             int64_t dim_out) {
  const std::string w = AddParam(name + "_w", {dim_out, dim_in}, ParamKind::kWeight, "XavierFill");
  const std::string b = AddParam(name + "_b", {dim_out}, ParamKind::kBias, "ConstantFill", 0.f);
  AddOp("FC", {in, w, b}, {Blob(name)})->set_name(name);
  return Blob(name);
}

std::string ModelBuilder::Sum(const std::vector<std::string>& ins, const std::string& name) {
  AddOp("Sum", ins, {Blob(name)})->set_name(name);
  return Blob(name);
}

std::string ModelBuilder::SumInPlace(const std::vector<std::string>& ins, const std::string& name) {
  AddOp("Sum", ins, {ins.at(0)})->set_name(name);
  return ins[0];
}

int CountOps(const NetDef& net, const std::string& type) {
  int n = 0;
  for (const OperatorDef& op : net.op()) n += op.type() == type ? 1 : 0;
  return n;
}

std::string NetToText(const NetDef& net) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(net, &text);
  return text;
}

}  // namespace braid
