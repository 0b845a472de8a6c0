#include <utility>

#include "runtime/io/onnx/onnx_converters.h"

namespace braid {
namespace {

// Split-18's num_outputs parts of `dim` (the lowering checked it equals the outputs' count):
// ceil(dim / n) each, the last what remains; refused where the last part would be empty.
std::vector<int64_t> NumOutputsSizes(ImportContext* ctx, int64_t axis, int64_t dim, int64_t n) {
  if (n < 1) ctx->Fail("attribute 'num_outputs' is " + std::to_string(n));
  const int64_t part = dim / n + (dim % n != 0 ? 1 : 0);
  if (dim % n != 0 && part * (n - 1) >= dim) {
    ctx->Fail("attribute 'num_outputs' " + std::to_string(n) + " leaves the last part of dim " +
              std::to_string(axis) + " (" + std::to_string(dim) + ") empty: parts of ceil(" +
              std::to_string(dim) + " / " + std::to_string(n) + ") = " + std::to_string(part));
  }
  std::vector<int64_t> sizes(n, part);
  sizes.back() = dim - part * (n - 1);
  return sizes;
}

// Split along `axis` into one part per output: sizes from the `split` attribute (before opset 13)
// or constant input (13 on), from opset 18's num_outputs (kept by the lowering, sized here from
// the inferred shape, which an input_shape option may have fixed after the lowering), else equal
// parts. The parts' shapes are recorded, as ONNX's opset-17 inference cannot size uneven parts.
void ConvertSplit(ImportContext* ctx) {
  const std::vector<int64_t> x = ctx->InputShape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = NormalizeAxis(IntAttr(*ctx, "axis", 0), rank, "Split");
  const int64_t parts = ctx->node().output_size();
  if (parts == 0) ctx->Fail("Split has no outputs");
  for (int i = 0; i < parts; ++i) {
    if (ctx->Output(i).empty()) ctx->Fail("output " + std::to_string(i) + " is unnamed");
  }
  std::vector<int64_t> sizes;
  if (ctx->opset() < 13) {
    sizes = IntsAttr(*ctx, "split");
  } else if (ctx->HasInput(1)) {
    sizes = ctx->InputConstant(1, "split").AsInts();
  } else if (ctx->model_opset() >= 18 && HasAttr(*ctx, "num_outputs")) {
    sizes = NumOutputsSizes(ctx, axis, x[axis], IntAttr(*ctx, "num_outputs", 0));
  }
  if (sizes.empty()) {
    if (x[axis] % parts != 0) {
      ctx->Fail("an equal split of dim " + std::to_string(axis) + " of " + DimsText(x) + " into " +
                std::to_string(parts) + " parts");
    }
    sizes.assign(parts, x[axis] / parts);
  }
  int64_t total = 0;  // the sizes' sum, or -1 once a size is negative or the sum passes the dim
  for (int64_t s : sizes) {
    if (s < 0 || s > x[axis] - total) {
      total = -1;
      break;
    }
    total += s;
  }
  if (static_cast<int64_t>(sizes.size()) != parts || total != x[axis]) {
    ctx->Fail("split sizes " + DimsText(sizes) + " do not cut dim " + std::to_string(axis) +
              " of " + DimsText(x) + " into " + std::to_string(parts) + " parts");
  }
  std::vector<std::string> outputs(ctx->node().output().begin(), ctx->node().output().end());
  OperatorDef* op = ctx->Emit("Split", {ctx->Input(0)}, outputs);
  AddIntArg(op, "axis", axis);
  AddIntsArg(op, "split", sizes);
  for (int64_t i = 0; i < parts; ++i) {
    std::vector<int64_t> dims = x;
    dims[axis] = sizes[i];
    ctx->SetShape(outputs[i], std::move(dims));
  }
}

void RequireAttr(ImportContext* ctx, const std::string& name, const std::string& default_value,
                 const std::string& wanted) {
  const std::string value = StringAttr(*ctx, name, default_value);
  if (value != wanted) {
    ctx->Fail("attribute '" + name + "' '" + value + "' is not supported; braid imports Resize " +
              "as ResizeNearest, with mode 'nearest', coordinate_transformation_mode " +
              "'asymmetric' and nearest_mode 'floor' (PyTorch's nearest interpolation)");
  }
}

// The scales of H and W: from `scales` (N and C scaled by 1) or from `sizes` (N and C kept).
std::pair<float, float> ResizeScales(ImportContext* ctx, const std::vector<int64_t>& x) {
  const int scales_input = ctx->opset() < 11 ? 1 : 2;
  if (ctx->HasInput(scales_input) && ctx->InputConstant(scales_input, "scales").numel() > 0) {
    const std::vector<float> s = ctx->InputConstant(scales_input, "scales").AsFloats();
    if (s.size() != 4 || s[0] != 1.f || s[1] != 1.f || !(s[2] > 0.f) || !(s[3] > 0.f)) {
      ctx->Fail("scales [" + std::to_string(s.size()) + " values] must be [1, 1, h, w] with " +
                "h, w > 0");
    }
    return {s[2], s[3]};
  }
  if (ctx->opset() < 11 || !ctx->HasInput(3)) ctx->Fail("Resize needs constant scales or sizes");
  const std::vector<int64_t> sizes = ctx->InputConstant(3, "sizes").AsInts();
  if (sizes.size() != 4 || sizes[0] != x[0] || sizes[1] != x[1] || sizes[2] <= 0 || sizes[3] <= 0 ||
      x[2] == 0 || x[3] == 0) {
    ctx->Fail("sizes " + DimsText(sizes) + " must keep N and C of " + DimsText(x) +
              " and give H, W > 0");
  }
  return {static_cast<float>(sizes[2]) / static_cast<float>(x[2]),
          static_cast<float>(sizes[3]) / static_cast<float>(x[3])};
}

// Resize (opsets 10 to 17's form) of NCHW by nearest neighbour, as braid's ResizeNearest.
void ConvertResize(ImportContext* ctx) {
  ctx->RequireOutputs(1);
  RequireAttr(ctx, "mode", "nearest", "nearest");
  if (ctx->opset() >= 11) {
    RequireAttr(ctx, "coordinate_transformation_mode", "half_pixel", "asymmetric");
    RequireAttr(ctx, "nearest_mode", "round_prefer_floor", "floor");
  }
  const std::vector<int64_t> x = ctx->InputShape(0);
  if (x.size() != 4) ctx->Fail("braid resizes NCHW tensors; X is " + DimsText(x));
  const auto [height_scale, width_scale] = ResizeScales(ctx, x);
  const float height = static_cast<float>(x[2]) * height_scale;
  const float width = static_cast<float>(x[3]) * width_scale;
  if (!(height < 1e12f && width < 1e12f)) {  // also keeps the casts below defined
    ctx->Fail("resizing " + DimsText(x) + " by " + std::to_string(height_scale) + " x " +
              std::to_string(width_scale) + " gives dims beyond 1e12");
  }
  const std::vector<int64_t> y = {x[0], x[1], static_cast<int64_t>(height),
                                  static_cast<int64_t>(width)};
  std::vector<int64_t> inferred;
  try {
    inferred = ctx->ShapeOf(ctx->Output(0));
  } catch (const Error&) {  // no static shape inferred: nothing to compare with
  }
  if (!inferred.empty() && y != inferred) {
    ctx->Fail("ResizeNearest would give " + DimsText(y) + " where ONNX infers " +
              DimsText(inferred));
  }
  OperatorDef* op = ctx->Emit("ResizeNearest", {ctx->Input(0)}, {ctx->Output(0)});
  AddFloatArg(op, "height_scale", height_scale);
  AddFloatArg(op, "width_scale", width_scale);
}

}  // namespace

void AddSplitResizeConverters(ConverterTable* table) {
  (*table)["Resize"] = ConvertResize;
  (*table)["Split"] = ConvertSplit;
}

}  // namespace braid
