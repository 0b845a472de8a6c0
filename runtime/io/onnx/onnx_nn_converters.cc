#include <cmath>

#include "runtime/io/onnx/onnx_converters.h"

namespace braid {
namespace {

// Strides and pads [t, l, b, r] of a 2-D window over X [N, C, H, W].
struct Window {
  std::vector<int64_t> kernel, strides{1, 1}, pads{0, 0, 0, 0};
};

std::vector<int64_t> Require4D(ImportContext* ctx, int input) {
  std::vector<int64_t> x = ctx->InputShape(input);
  if (x.size() != 4) {
    ctx->Fail("braid imports 2-D windows over NCHW tensors; X '" + ctx->node().input(input) +
              "' is " + DimsText(x));
  }
  return x;
}

std::vector<int64_t> PairAttr(ImportContext* ctx, const std::string& name,
                              std::vector<int64_t> default_value) {
  std::vector<int64_t> v = IntsAttr(*ctx, name);
  if (v.empty()) return default_value;
  if (v.size() != 2) ctx->Fail("attribute '" + name + "' " + DimsText(v) + " must have 2 values");
  return v;
}

// kernel_shape, strides, pads (dilations given: the effective kernel) and auto_pad.
Window ReadWindow(ImportContext* ctx, const std::vector<int64_t>& x, std::vector<int64_t> kernel,
                  const std::vector<int64_t>& dilations) {
  Window w;
  w.kernel = PairAttr(ctx, "kernel_shape", kernel);
  if (!kernel.empty() && w.kernel != kernel) {
    ctx->Fail("kernel_shape " + DimsText(w.kernel) + " differs from the filter's " +
              DimsText(kernel));
  }
  w.strides = PairAttr(ctx, "strides", {1, 1});
  const std::vector<int64_t> pads = IntsAttr(*ctx, "pads");
  if (!pads.empty() && pads.size() != 4) ctx->Fail("attribute 'pads' must have 4 values");
  if (!pads.empty()) w.pads = pads;  // ONNX [h_begin, w_begin, h_end, w_end] = [t, l, b, r]
  const std::string auto_pad = StringAttr(*ctx, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    w.pads = {0, 0, 0, 0};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int d = 0; d < 2; ++d) {
      const int64_t in = x[2 + d], s = w.strides[d];
      const int64_t extent = dilations[d] * (w.kernel[d] - 1) + 1;
      const int64_t total = std::max<int64_t>((in + s - 1) / s * s - s + extent - in, 0);
      const int64_t small = total / 2, large = total - small;
      w.pads[d] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads[d + 2] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "NOTSET") {
    ctx->Fail("auto_pad '" + auto_pad + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  }
  return w;
}

// ceil_mode = 1: the end pads grow so that braid's floor rule gives ONNX's ceil-rounded size
// (a last window that would start in the end padding is dropped, as PyTorch does). Returns
// whether any pad grew.
bool ApplyCeilMode(const std::vector<int64_t>& x, Window* w) {
  bool grew = false;
  for (int d = 0; d < 2; ++d) {
    const int64_t in = x[2 + d], k = w->kernel[d], s = w->strides[d];
    const int64_t begin = w->pads[d], end = w->pads[d + 2];
    const int64_t span = in + begin + end - k;
    const int64_t floor_out = span / s + 1;
    int64_t ceil_out = (span + s - 1) / s + 1;
    if ((ceil_out - 1) * s >= in + begin) --ceil_out;
    if (ceil_out > floor_out) {
      w->pads[d + 2] += (ceil_out - 1) * s + k - (in + begin + end);
      grew = true;
    }
  }
  return grew;
}

void AddWindowArgs(const Window& w, OperatorDef* op, bool with_kernel) {
  if (with_kernel) AddIntsArg(op, "kernels", w.kernel);
  AddIntsArg(op, "strides", w.strides);
  AddIntsArg(op, "pads", w.pads);
}

void ConvertConv(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  const PendingPad* pad = ctx->InputPad(0);
  const std::vector<int64_t> x = Require4D(ctx, 0);
  const std::vector<int64_t> filter = ctx->InputShape(1);
  if (filter.size() != 4) ctx->Fail("filter " + DimsText(filter) + " is not 4-D");
  const std::vector<int64_t> dilations = PairAttr(ctx, "dilations", {1, 1});
  Window w = ReadWindow(ctx, x, {filter[2], filter[3]}, dilations);
  std::string input;
  if (pad != nullptr) {
    input = pad->source;
    for (int i = 0; i < 4; ++i) w.pads[i] += pad->pads[i];
  } else {
    input = ctx->Input(0);
  }
  std::vector<std::string> inputs = {input, ctx->Input(1)};
  if (ctx->HasInput(2)) inputs.push_back(ctx->Input(2));
  OperatorDef* op = ctx->Emit("Conv", inputs, {ctx->Output(0)});
  AddWindowArgs(w, op, false);
  AddIntsArg(op, "dilations", dilations);
  AddIntArg(op, "group", IntAttr(*ctx, "group", 1));
}

void ConvertPool(ImportContext* ctx, const std::string& type) {
  ctx->RequireOutputs(1);
  const std::vector<int64_t> x = Require4D(ctx, 0);
  if (IntAttr(*ctx, "storage_order", 0) != 0) ctx->Fail("storage_order 1 is not supported");
  if (PairAttr(ctx, "dilations", {1, 1}) != std::vector<int64_t>{1, 1}) {
    ctx->Fail("pooling with dilations is not supported");
  }
  if (!HasAttr(*ctx, "kernel_shape")) ctx->Fail("attribute 'kernel_shape' is required");
  Window w = ReadWindow(ctx, x, {}, {1, 1});
  bool count_include_pad = IntAttr(*ctx, "count_include_pad", 0) != 0;
  std::string input;
  if (const PendingPad* pad = ctx->InputPad(0); pad != nullptr && type == "AveragePool") {
    // The Pad's zeros count in every window's average: count_include_pad over all the pads.
    if (!count_include_pad && w.pads != std::vector<int64_t>{0, 0, 0, 0}) {
      ctx->Fail("a Pad before an AveragePool that pads itself with count_include_pad=0");
    }
    count_include_pad = true;
    for (int i = 0; i < 4; ++i) w.pads[i] += pad->pads[i];
    input = pad->source;
  } else {
    input = ctx->Input(0);  // fails for a Pad before MaxPool (zeros are not -inf)
  }
  if (IntAttr(*ctx, "ceil_mode", 0) != 0 && ApplyCeilMode(x, &w) && count_include_pad &&
      type == "AveragePool") {
    ctx->Fail("ceil_mode=1 with count_include_pad=1 where the last window passes the padding");
  }
  OperatorDef* op = ctx->Emit(type, {input}, {ctx->Output(0)});
  AddWindowArgs(w, op, true);
  if (type == "AveragePool") AddIntArg(op, "count_include_pad", count_include_pad ? 1 : 0);
}

void ConvertMaxPool(ImportContext* ctx) { ConvertPool(ctx, "MaxPool"); }
void ConvertAveragePool(ImportContext* ctx) { ConvertPool(ctx, "AveragePool"); }

void ConvertGlobalPool(ImportContext* ctx, const std::string& type) {
  ctx->RequireOutputs(1);
  Require4D(ctx, 0);
  OperatorDef* op = ctx->Emit(type, {ctx->Input(0)}, {ctx->Output(0)});
  AddIntArg(op, "global_pooling", 1);
}

void ConvertGlobalAveragePool(ImportContext* ctx) { ConvertGlobalPool(ctx, "AveragePool"); }
void ConvertGlobalMaxPool(ImportContext* ctx) { ConvertGlobalPool(ctx, "MaxPool"); }

void ConvertBatchNormalization(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  if (IntAttr(*ctx, "training_mode", 0) != 0) ctx->Fail("training_mode=1 is not supported");
  std::vector<std::string> inputs;
  for (int i = 0; i < 5; ++i) inputs.push_back(ctx->Input(i));
  OperatorDef* op = ctx->Emit("SpatialBN", inputs, {ctx->Output(0)});
  AddIntArg(op, "is_test", 1);
  AddFloatArg(op, "epsilon", FloatAttr(*ctx, "epsilon", 1e-5f));
}

ConstantTensor Scaled(ConstantTensor value, float factor) {
  std::vector<float> v = value.AsFloats();
  for (float& x : v) x *= factor;
  return FloatConstant(value.dims, std::move(v));
}

// The FC bias [N] for Gemm's C (absent: zeros) times beta. N comes from a weight's shape, which a
// model may declare without data: it is capped as folds are.
std::string GemmBias(ImportContext* ctx, int64_t n, float beta) {
  if (n < 0 || n > kMaxFoldedElements) {
    ctx->Fail("the output width " + std::to_string(n) + " is outside [0, " +
              std::to_string(kMaxFoldedElements) + "]");
  }
  const std::string hint = ctx->Output(0) + "_bias";
  if (!ctx->HasInput(2)) return ctx->NewWeight(hint, FloatConstant({n}, std::vector<float>(n, 0)));
  if (!ctx->InputIsConstant(2)) {
    const std::vector<int64_t> c = ctx->InputShape(2);
    if (c != std::vector<int64_t>{n} || beta != 1.f) {
      ctx->Fail("a computed C must be [" + std::to_string(n) + "] with beta=1, got " + DimsText(c));
    }
    return ctx->Input(2);
  }
  const ConstantTensor& c = ctx->InputConstant(2, "C");
  std::vector<float> values = c.AsFloats();
  if (values.size() == 1) values.assign(n, values[0]);
  if (static_cast<int64_t>(values.size()) != n || (c.dims.size() == 2 && c.dims[1] != n)) {
    ctx->Fail("C " + DimsText(c.dims) + " must broadcast over each row of [M, " +
              std::to_string(n) + "] alone");
  }
  return ctx->NewWeight(hint, Scaled(FloatConstant({n}, std::move(values)), beta));
}

void ConvertGemm(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  if (IntAttr(*ctx, "transA", 0) != 0) ctx->Fail("transA=1 is not supported");
  const std::vector<int64_t> a = ctx->InputShape(0);
  if (a.size() != 2) ctx->Fail("A " + DimsText(a) + " is not 2-D");
  const bool trans_b = IntAttr(*ctx, "transB", 0) != 0;
  const float alpha = FloatAttr(*ctx, "alpha", 1.f), beta = FloatAttr(*ctx, "beta", 1.f);
  std::string weight;
  int64_t n;
  // B is [N, K] with transB, else [K, N]; K must be A's and not 0 (a B of no elements would
  // leave N unbounded by any data).
  const auto check_b = [&](const std::vector<int64_t>& b) {
    if (b.size() != 2 || b[trans_b ? 1 : 0] != a[1] || a[1] == 0) {
      ctx->Fail("Gemm of A " + DimsText(a) + " and B " + DimsText(b) +
                (trans_b ? " (transB=1)" : "") + " is not a product with K > 0");
    }
  };
  if (trans_b && alpha == 1.f && !ctx->InputIsConstant(1)) {
    weight = ctx->Input(1);
    const std::vector<int64_t> b = ctx->InputShape(1);
    check_b(b);
    n = b[0];
  } else {
    const ConstantTensor& b = ctx->InputConstant(1, "B (with transB=0 or alpha != 1)");
    check_b(b.dims);
    ConstantTensor w = trans_b ? FloatConstant(b.dims, b.AsFloats()) : TransposeMatrix(b);
    n = w.dims[0];
    weight = (trans_b && alpha == 1.f) ? ctx->Input(1)
                                       : ctx->NewWeight(ctx->Output(0) + "_weight",
                                                        Scaled(std::move(w), alpha));
  }
  const std::string bias = GemmBias(ctx, n, beta);
  ctx->Emit("FC", {ctx->Input(0), weight, bias}, {ctx->Output(0)});
}

void ConvertMatMul(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  const std::vector<int64_t> a = ctx->InputShape(0);
  const ConstantTensor& b = ctx->InputConstant(1, "B (MatMul imports as FC)");
  if (b.dims.size() != 2 || a.size() < 2 || a.back() != b.dims[0] || b.dims[0] == 0) {
    ctx->Fail("MatMul of A " + DimsText(a) + " and B " + DimsText(b.dims) +
              " is not a product with a 2-D weight and K > 0");
  }
  const std::string weight = ctx->NewWeight(ctx->Output(0) + "_weight", TransposeMatrix(b));
  const std::string bias = GemmBias(ctx, b.dims[1], 1.f);  // zeros: MatMul has no C
  OperatorDef* op = ctx->Emit("FC", {ctx->Input(0), weight, bias}, {ctx->Output(0)});
  AddIntArg(op, "axis", static_cast<int64_t>(a.size()) - 1);
}

}  // namespace

void AddNnConverters(ConverterTable* table) {
  (*table)["AveragePool"] = ConvertAveragePool;
  (*table)["BatchNormalization"] = ConvertBatchNormalization;
  (*table)["Conv"] = ConvertConv;
  (*table)["Gemm"] = ConvertGemm;
  (*table)["GlobalAveragePool"] = ConvertGlobalAveragePool;
  (*table)["GlobalMaxPool"] = ConvertGlobalMaxPool;
  (*table)["MatMul"] = ConvertMatMul;
  (*table)["MaxPool"] = ConvertMaxPool;
}

}  // namespace braid
