#include <algorithm>
#include <limits>

#include "braid/status.h"
#include "runtime/io/onnx/onnx_converters.h"

namespace braid {
namespace {

void ConvertRelu(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  ctx->Emit("Relu", {ctx->Input(0)}, {ctx->Output(0)});
}

// Clip's bounds: attributes before opset 11, optional constant inputs from 11 on.
void ConvertClip(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  float low = std::numeric_limits<float>::lowest(), high = std::numeric_limits<float>::max();
  if (ctx->opset() < 11) {
    low = FloatAttr(*ctx, "min", low);
    high = FloatAttr(*ctx, "max", high);
  } else {
    if (ctx->HasInput(1)) low = ctx->InputScalar(1, "min").AsFloats()[0];
    if (ctx->HasInput(2)) high = ctx->InputScalar(2, "max").AsFloats()[0];
  }
  OperatorDef* op = ctx->Emit("Clip", {ctx->Input(0)}, {ctx->Output(0)});
  AddFloatArg(op, "min", low);
  AddFloatArg(op, "max", high);
}

// ONNX's multidirectional broadcast as Caffe2's legacy rule: the smaller operand must equal a
// contiguous run of the full operand's dims (1s elsewhere); it is reshaped to that run and applied
// at its axis. Add and Mul commute, so either operand may be the smaller one.
void ConvertBroadcastBinary(ImportContext* ctx, const std::string& type) {
  ctx->RequireOutputs(1);
  std::vector<int64_t> a = ctx->InputShape(0), b = ctx->InputShape(1);
  int full = 0;
  if (a != b) {
    const size_t rank = std::max(a.size(), b.size());
    std::vector<int64_t> pa(rank - a.size(), 1), pb(rank - b.size(), 1);
    pa.insert(pa.end(), a.begin(), a.end());
    pb.insert(pb.end(), b.begin(), b.end());
    bool a_full = true, b_full = true;
    for (size_t i = 0; i < rank; ++i) {
      a_full = a_full && (pa[i] == pb[i] || pb[i] == 1);
      b_full = b_full && (pa[i] == pb[i] || pa[i] == 1);
    }
    if (!a_full && !b_full) {
      ctx->Fail("broadcasting A " + DimsText(a) + " and B " + DimsText(b) +
                " into a shape neither has is not supported");
    }
    full = (a_full && a.size() >= b.size()) || !b_full ? 0 : 1;
  }
  const std::vector<int64_t>& big = full == 0 ? a : b;
  const std::vector<int64_t>& small = full == 0 ? b : a;
  if (big.size() < small.size()) {
    ctx->Fail("broadcasting A " + DimsText(a) + " and B " + DimsText(b) +
              " adds dims to the larger operand, which Caffe2's rule cannot express");
  }
  std::vector<std::string> inputs = {ctx->Input(full), ""};
  OperatorDef* op;
  if (big == small) {
    inputs[1] = ctx->Input(1 - full);
    op = ctx->Emit(type, inputs, {ctx->Output(0)});
    return;
  }
  std::vector<int64_t> padded(big.size() - small.size(), 1);
  padded.insert(padded.end(), small.begin(), small.end());
  int64_t first = static_cast<int64_t>(padded.size()), last = -1;
  for (int64_t i = 0; i < static_cast<int64_t>(padded.size()); ++i) {
    if (padded[i] != 1) first = std::min(first, i), last = i;
  }
  for (int64_t i = first; i <= last; ++i) {
    if (padded[i] != big[i]) {
      ctx->Fail("broadcasting " + DimsText(small) + " over " + DimsText(big) +
                " repeats inside the smaller operand's dims, which Caffe2's rule cannot express");
    }
  }
  std::vector<int64_t> run;
  if (last >= 0) run.assign(big.begin() + first, big.begin() + last + 1);
  const int64_t axis = last >= 0 ? first : static_cast<int64_t>(big.size());
  const int other = 1 - full;
  if (run == small) {
    inputs[1] = ctx->Input(other);
  } else if (ctx->InputIsConstant(other)) {
    ConstantTensor c = ctx->InputConstant(other, "B");
    c.dims = run;
    inputs[1] = ctx->NewWeight(ctx->node().input(other) + "_" + type + "_operand", std::move(c));
  } else {
    const std::string reshaped = ctx->UniqueName(ctx->node().input(other) + "_reshaped");
    OperatorDef* reshape = ctx->Emit("Reshape", {ctx->Input(other)},
                                     {reshaped, ctx->UniqueName(reshaped + "_old_shape")});
    AddIntsArg(reshape, "shape", run);
    inputs[1] = reshaped;
  }
  op = ctx->Emit(type, inputs, {ctx->Output(0)});
  AddIntArg(op, "broadcast", 1);
  AddIntArg(op, "axis", axis);
}

void ConvertAdd(ImportContext* ctx) { ConvertBroadcastBinary(ctx, "Add"); }
void ConvertMul(ImportContext* ctx) { ConvertBroadcastBinary(ctx, "Mul"); }

void ConvertConcat(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  if (ctx->node().input_size() == 0) ctx->Fail("Concat needs at least one input");
  const int64_t axis = IntAttr(*ctx, "axis", 1);
  bool all_constant = true;
  for (int i = 0; i < ctx->node().input_size(); ++i) all_constant &= ctx->InputIsConstant(i);
  if (all_constant) {
    std::vector<const ConstantTensor*> parts;
    for (int i = 0; i < ctx->node().input_size(); ++i) {
      parts.push_back(&ctx->InputConstant(i, "input"));
    }
    ctx->SetConstant(ctx->Output(0), ConcatConstants(parts, axis));
    return;
  }
  std::vector<std::string> inputs;
  for (int i = 0; i < ctx->node().input_size(); ++i) inputs.push_back(ctx->Input(i));
  const int64_t rank = static_cast<int64_t>(ctx->InputShape(0).size());
  const std::string out = ctx->Output(0);
  OperatorDef* op = ctx->Emit("Concat", inputs, {out, ctx->UniqueName(out + "_split_info")});
  AddIntArg(op, "axis", NormalizeAxis(axis, rank, "Concat"));
}

// A value whose data is input 0's with new dims: folded for a constant, else a Reshape to `dims`
// (ONNX's values: 0 copies a dim, -1 is inferred, as in braid's Reshape). A first dim equal to
// the input's (a batch the export folded into a constant, as `x.view(x.size(0), -1)` becomes)
// is written as 0, so the net also takes other batch sizes; at the imported one nothing changes.
void EmitReshape(ImportContext* ctx, std::vector<int64_t> dims) {
  const std::string out = ctx->Output(0);
  if (ctx->InputIsConstant(0)) {
    ConstantTensor c = ctx->InputConstant(0, "data");
    c.dims = ctx->ShapeOf(out);
    ctx->SetConstant(out, std::move(c));
    return;
  }
  std::vector<int64_t> in;
  try {
    in = ctx->InputShape(0);
  } catch (const Error&) {  // no static shape: keep the dims as they are
  }
  if (!dims.empty() && !in.empty() && dims[0] > 0 && dims[0] == in[0]) dims[0] = 0;
  OperatorDef* op =
      ctx->Emit("Reshape", {ctx->Input(0)}, {out, ctx->UniqueName(out + "_old_shape")});
  AddIntsArg(op, "shape", dims);
}

void ConvertReshape(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  const std::vector<int64_t> shape = ctx->InputConstant(1, "shape").AsInts();
  if (IntAttr(*ctx, "allowzero", 0) != 0 && std::count(shape.begin(), shape.end(), 0) > 0) {
    ctx->Fail("allowzero=1 with a 0 in shape " + DimsText(shape) + " is not supported");
  }
  EmitReshape(ctx, shape);
}

// Squeeze and Unsqueeze: a Reshape to the static output shape.
void ConvertSqueezeOrUnsqueeze(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  EmitReshape(ctx, ctx->ShapeOf(ctx->Output(0)));
}

void ConvertFlatten(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  const int64_t rank = static_cast<int64_t>(ctx->InputShape(0).size());
  int64_t axis = IntAttr(*ctx, "axis", 1);
  if (axis != rank) axis = NormalizeAxis(axis, rank, "Flatten");
  if (ctx->InputIsConstant(0)) {
    EmitReshape(ctx, {});
    return;
  }
  OperatorDef* op = ctx->Emit("Flatten", {ctx->Input(0)}, {ctx->Output(0)});
  AddIntArg(op, "axis", axis);
}

}  // namespace

// Identity and inference-mode Dropout: the output names the input's value; a graph output gets
// a Copy, so that the predict net writes it.
void ConvertPassThrough(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  if (ctx->node().op_type() == "Dropout" && ctx->HasInput(2) &&
      ctx->InputScalar(2, "training_mode").AsInts()[0] != 0) {
    ctx->Fail("training_mode=true is not supported");
  }
  const std::string out = ctx->Output(0);
  if (ctx->IsGraphOutput(out)) {
    ctx->Emit("Copy", {ctx->Input(0)}, {out});
  } else if (ctx->InputIsConstant(0)) {
    ctx->SetConstant(out, ctx->InputConstant(0, "input"));
  } else if (ctx->InputPad(0) != nullptr) {
    ctx->SetPendingPad(out, *ctx->InputPad(0));
  } else {
    ctx->SetAlias(out, ctx->Input(0));
  }
}

namespace {

// Softmax before opset 13 normalises over the dims from `axis` (default 1), as braid's Softmax
// does; from 13 on over the single dim `axis` (default -1), the same where the dims after it are 1.
void ConvertSoftmax(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  const std::vector<int64_t> x = ctx->InputShape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis =
      NormalizeAxis(IntAttr(*ctx, "axis", ctx->opset() < 13 ? 1 : -1), rank, "Softmax");
  if (ctx->opset() >= 13) {
    for (int64_t i = axis + 1; i < rank; ++i) {
      if (x[i] != 1) {
        ctx->Fail("Softmax over axis " + std::to_string(axis) + " of " + DimsText(x) +
                  " (not the last non-1 dim) is not supported");
      }
    }
  }
  OperatorDef* op = ctx->Emit("Softmax", {ctx->Input(0)}, {ctx->Output(0)});
  AddIntArg(op, "axis", axis);
}

void ConvertConstant(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  const onnx::NodeProto& node = ctx->node();
  ConstantTensor value;
  if (const onnx::AttributeProto* t = FindAttr(node, "value")) {
    value = ConstantFromOnnx(t->t());
  } else if (const onnx::AttributeProto* f = FindAttr(node, "value_float")) {
    value = FloatConstant({}, {f->f()});
  } else if (const onnx::AttributeProto* fs = FindAttr(node, "value_floats")) {
    value = FloatConstant({fs->floats_size()}, {fs->floats().begin(), fs->floats().end()});
  } else if (const onnx::AttributeProto* i = FindAttr(node, "value_int")) {
    value = IntConstant({}, {i->i()});
  } else if (const onnx::AttributeProto* is = FindAttr(node, "value_ints")) {
    value = IntConstant({is->ints_size()}, {is->ints().begin(), is->ints().end()});
  } else {
    ctx->Fail("braid reads a Constant's value, value_float(s) or value_int(s) attribute");
  }
  ctx->SetConstant(ctx->Output(0), std::move(value));
}

// A constant zero Pad of H and W only, folded into the Conv or AveragePool that reads it.
void ConvertPad(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  if (const std::string mode = StringAttr(*ctx, "mode", "constant"); mode != "constant") {
    ctx->Fail("attribute 'mode' '" + mode + "' is not supported, only 'constant'");
  }
  std::vector<int64_t> pads;
  float value = 0;
  if (ctx->opset() < 11) {
    pads = IntsAttr(*ctx, "pads");
    value = FloatAttr(*ctx, "value", 0.f);
  } else {
    pads = ctx->InputConstant(1, "pads").AsInts();
    if (ctx->HasInput(2)) value = ctx->InputScalar(2, "constant_value").AsFloats()[0];
  }
  if (value != 0.f) ctx->Fail("padding with " + std::to_string(value) + " (not 0)");
  const std::vector<int64_t> x = ctx->InputShape(0);
  if (x.size() != 4 || pads.size() != 8 || pads[0] || pads[1] || pads[4] || pads[5] ||
      *std::min_element(pads.begin(), pads.end()) < 0) {
    ctx->Fail("braid folds only non-negative pads of H and W of a 4-D tensor, got pads " +
              DimsText(pads) + " of " + DimsText(x));
  }
  PendingPad pad;
  pad.pads = {pads[2], pads[3], pads[6], pads[7]};
  if (const PendingPad* before = ctx->InputPad(0)) {
    for (int i = 0; i < 4; ++i) pad.pads[i] += before->pads[i];
    pad.source = before->source;
  } else {
    pad.source = ctx->Input(0);
  }
  ctx->SetPendingPad(ctx->Output(0), pad);
}

// Shape of a value with a static shape (opset 15's start and end slice it).
void ConvertShape(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  const std::vector<int64_t> x = ctx->InputShape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t start = IntAttr(*ctx, "start", 0), end = IntAttr(*ctx, "end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, start, rank);
  std::vector<int64_t> dims(x.begin() + start, x.begin() + end);
  ctx->SetConstant(ctx->Output(0), IntConstant({static_cast<int64_t>(dims.size())}, dims));
}

void ConvertGather(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  ctx->SetConstant(ctx->Output(0),
                   GatherConstant(ctx->InputConstant(0, "data (Gather is folded at import)"),
                                  ctx->InputConstant(1, "indices"), IntAttr(*ctx, "axis", 0)));
}

// A constant cast to `to`; refuses the types braid does not hold (float16, bfloat16, string,
// complex, and opset 19's float8 and 21's int4 types among them).
// Each value as the integer type Narrow holds it, widened back to int64: integer casts wrap
// modulo 2^bits as ONNX's and numpy's do (Cast(-1 -> uint8) is 255, Cast(300 -> int8) is 44).
template <typename Narrow>
std::vector<int64_t> WrapInts(std::vector<int64_t> values) {
  for (int64_t& v : values) v = static_cast<int64_t>(static_cast<Narrow>(v));
  return values;
}

ConstantTensor CastConstant(ImportContext* ctx, const ConstantTensor& in, int64_t to) {
  using T = onnx::TensorProto;
  switch (to) {
    case T::FLOAT:
    case T::DOUBLE:
      return FloatConstant(in.dims, in.AsFloats());
    case T::INT8:
      return IntConstant(in.dims, WrapInts<int8_t>(in.AsInts()));
    case T::INT16:
      return IntConstant(in.dims, WrapInts<int16_t>(in.AsInts()));
    case T::INT32:
      return IntConstant(in.dims, WrapInts<int32_t>(in.AsInts()));
    case T::INT64:
      return IntConstant(in.dims, in.AsInts());
    case T::UINT8:
      return IntConstant(in.dims, WrapInts<uint8_t>(in.AsInts()));
    case T::UINT16:
      return IntConstant(in.dims, WrapInts<uint16_t>(in.AsInts()));
    case T::UINT32:
      return IntConstant(in.dims, WrapInts<uint32_t>(in.AsInts()));
    case T::BOOL: {
      std::vector<int64_t> values;
      for (float v : in.AsFloats()) values.push_back(v != 0.f ? 1 : 0);
      return IntConstant(in.dims, std::move(values));
    }
    default:
      ctx->Fail("attribute 'to' is ONNX type " + std::to_string(to) +
                ", which braid does not fold (it folds casts to float, double, int8 to int64, " +
                "uint8 to uint32 and bool)");
  }
}

void ConvertCast(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  const int64_t to = IntAttr(*ctx, "to", 0);
  if (!ctx->InputIsConstant(0)) {
    if (to != onnx::TensorProto::FLOAT) ctx->Fail("Cast of a computed value to type " +
                                                  std::to_string(to) + " (braid keeps float32)");
    ConvertPassThrough(ctx);
    return;
  }
  ctx->SetConstant(ctx->Output(0), CastConstant(ctx, ctx->InputConstant(0, "input"), to));
}

}  // namespace

void AddTensorConverters(ConverterTable* table) {
  (*table)["Add"] = ConvertAdd;
  (*table)["Cast"] = ConvertCast;
  (*table)["Clip"] = ConvertClip;
  (*table)["Concat"] = ConvertConcat;
  (*table)["Constant"] = ConvertConstant;
  (*table)["Dropout"] = ConvertPassThrough;
  (*table)["Flatten"] = ConvertFlatten;
  (*table)["Gather"] = ConvertGather;
  (*table)["Identity"] = ConvertPassThrough;
  (*table)["Mul"] = ConvertMul;
  (*table)["Pad"] = ConvertPad;
  (*table)["Relu"] = ConvertRelu;
  (*table)["Reshape"] = ConvertReshape;
  (*table)["Shape"] = ConvertShape;
  (*table)["Softmax"] = ConvertSoftmax;
  (*table)["Squeeze"] = ConvertSqueezeOrUnsqueeze;
  (*table)["Unsqueeze"] = ConvertSqueezeOrUnsqueeze;
}

const ConverterTable& NodeConverters() {
  static const ConverterTable* table = [] {
    auto* t = new ConverterTable;
    AddNnConverters(t);
    AddTensorConverters(t);
    AddReduceConverters(t);
    AddSplitResizeConverters(t);
    return t;
  }();
  return *table;
}

}  // namespace braid
