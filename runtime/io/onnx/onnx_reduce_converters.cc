#include <set>

#include "runtime/io/onnx/onnx_converters.h"

namespace braid {
namespace {

// ReduceMean / ReduceSum over `axes` (empty: every axis, or none with noop_with_empty_axes=1,
// which makes the node an Identity) as braid's op of the same name.
void EmitReduce(ImportContext* ctx, const std::string& type, const std::vector<int64_t>& axes,
                bool noop_with_empty_axes) {
  ctx->RequireOutputs(1);
  if (axes.empty() && noop_with_empty_axes) {
    ConvertPassThrough(ctx);
    return;
  }
  const int64_t rank = static_cast<int64_t>(ctx->InputShape(0).size());
  std::vector<int64_t> normalized;
  std::set<int64_t> seen;
  for (int64_t axis : axes) {
    const int64_t a = NormalizeAxis(axis, rank, type);
    if (!seen.insert(a).second)
      ctx->Fail("axes " + DimsText(axes) + " name axis " + std::to_string(a) + " twice");
    normalized.push_back(a);
  }
  OperatorDef* op = ctx->Emit(type, {ctx->Input(0)}, {ctx->Output(0)});
  if (!normalized.empty()) AddIntsArg(op, "axes", normalized);
  AddIntArg(op, "keepdims", IntAttr(*ctx, "keepdims", 1) != 0 ? 1 : 0);
}

// ReduceMean keeps `axes` an attribute up to opset 17 (opset 18's input was lowered to it).
void ConvertReduceMean(ImportContext* ctx) {
  EmitReduce(ctx, "ReduceMean", IntsAttr(*ctx, "axes"), false);
}

// ReduceSum: `axes` an attribute before opset 13, an optional constant input from 13 on, with
// noop_with_empty_axes.
void ConvertReduceSum(ImportContext* ctx) {
  if (ctx->opset() < 13) {
    EmitReduce(ctx, "ReduceSum", IntsAttr(*ctx, "axes"), false);
    return;
  }
  std::vector<int64_t> axes;
  if (ctx->HasInput(1)) axes = ctx->InputConstant(1, "axes").AsInts();
  EmitReduce(ctx, "ReduceSum", axes, IntAttr(*ctx, "noop_with_empty_axes", 0) != 0);
}

}  // namespace

void AddReduceConverters(ConverterTable* table) {
  (*table)["ReduceMean"] = ConvertReduceMean;
  (*table)["ReduceSum"] = ConvertReduceSum;
}

}  // namespace braid
