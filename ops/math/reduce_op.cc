#include "ops/math/reduce_op.h"

#include <string>
#include <type_traits>

#include "ops/common/dtype_dispatch.h"
#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

// Which of x's dims `axes` names (every dim when it is absent or empty).
std::vector<bool> ReducedDims(const OperatorDef& def, const ShapeInfo& x) {
  const int ndim = static_cast<int>(x.dims.size());
  const std::vector<int> axes = ArgumentReader(def.arg()).GetList<int>("axes");
  std::vector<bool> reduced(ndim, axes.empty());
  for (int axis : axes) {
    const int canonical = axis < 0 ? axis + ndim : axis;
    if (canonical < 0 || canonical >= ndim) {
      ThrowInvalidArgument("argument 'axes' holds " + std::to_string(axis) +
                           ", out of range for input " + DescribeBlob(def.input(0), x));
    }
    if (reduced[canonical]) {
      ThrowInvalidArgument("argument 'axes' names axis " + std::to_string(canonical) +
                           " of input " + DescribeBlob(def.input(0), x) + " twice");
    }
    reduced[canonical] = true;
  }
  return reduced;
}

// Calls fn(x_offset, y_offset) for each run of X along its last merged dim.
template <typename Fn>
void ForEachRun(const ReducePlan& p, Fn fn) {
  const int k = static_cast<int>(p.x_dims.size());
  const int64_t inner = p.x_dims.back();
  int64_t runs = 1;
  for (int d = 0; d + 1 < k; ++d) runs *= p.x_dims[d];
  if (inner == 0 || runs == 0) return;
  std::vector<int64_t> index(k, 0);
  int64_t y_offset = 0;
  for (int64_t run = 0; run < runs; ++run) {
    fn(run * inner, y_offset);
    for (int d = k - 2; d >= 0; --d) {
      if (++index[d] < p.x_dims[d]) {
        y_offset += p.y_strides[d];
        break;
      }
      y_offset -= (p.x_dims[d] - 1) * p.y_strides[d];
      index[d] = 0;
    }
  }
}

void CheckReduceInput(const OperatorDef& def, const ShapeInfo& x, bool mean) {
  const bool ok = x.dtype == DType::kFloat32 ||
                  (!mean && (x.dtype == DType::kInt32 || x.dtype == DType::kInt64));
  if (!ok) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(0), x) + " must be float32" +
                         (mean ? "" : " or int32 or int64"));
  }
}

template <bool kMean>
ReducePlan PlanChecked(const OperatorDef& def, const ShapeInfo& x) {
  CheckReduceInput(def, x, kMean);
  ReducePlan plan = PlanReduce(def, x);
  if (kMean && plan.reduced_count == 0) {
    ThrowInvalidArgument("ReduceMean cannot average over no elements of input " +
                         DescribeBlob(def.input(0), x));
  }
  return plan;
}

template <bool kMean>
std::vector<ShapeInfo> InferReduceShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.size() != 1) return {};  // arity is reported by OpSchema::Verify
  return {ShapeInfo{in[0].dtype, PlanChecked<kMean>(def, in[0]).y_dims, true}};
}

// (dY, X) -> dX; def's input 1 is the forward X.
template <bool kMean>
std::vector<ShapeInfo> InferReduceGradientShape(const OperatorDef& def,
                                                const std::vector<ShapeInfo>& in) {
  if (in.size() != 2) return {};  // arity is reported by OpSchema::Verify
  OperatorDef forward = def;
  forward.clear_input();
  forward.add_input(def.input(1));
  const ReducePlan plan = PlanChecked<kMean>(forward, in[1]);
  if (in[1].dtype != DType::kFloat32 || in[0].dtype != DType::kFloat32 ||
      in[0].dims != plan.y_dims) {
    ThrowInvalidArgument("dY " + DescribeBlob(def.input(0), in[0]) + " must be float32" +
                         DimsText(plan.y_dims) + ", the reduction of float32 X " +
                         DescribeBlob(def.input(1), in[1]));
  }
  return {in[1]};
}

template <bool kMean>
GradientOps ReduceGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  const char* type = kMean ? "ReduceMeanGradient" : "ReduceSumGradient";
  return {{MakeGradientOp(r.op, type, {r.output_grads[0], r.op.input(0)}, {r.input_grads[0]})},
          {true}};
}

template <typename T, bool kMean>
void ReduceTyped(const ReducePlan& plan, const T* x, T* y) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
  std::vector<Acc> acc(SizeFromDim(plan.y_dims, 0), Acc{0});
  const int64_t inner = plan.x_dims.back();
  const int64_t stride = plan.y_strides.back();
  ForEachRun(plan, [&](int64_t x_offset, int64_t y_offset) {
    const T* row = x + x_offset;
    if (stride == 0) {
      Acc sum = 0;
      for (int64_t i = 0; i < inner; ++i) sum += static_cast<Acc>(row[i]);
      acc[y_offset] += sum;
    } else {
      for (int64_t i = 0; i < inner; ++i) acc[y_offset + i * stride] += static_cast<Acc>(row[i]);
    }
  });
  for (size_t i = 0; i < acc.size(); ++i) {
    y[i] = kMean ? static_cast<T>(acc[i] / plan.reduced_count) : static_cast<T>(acc[i]);
  }
}

}  // namespace

ReducePlan PlanReduce(const OperatorDef& def, const ShapeInfo& x) {
  const std::vector<bool> reduced = ReducedDims(def, x);
  const bool keepdims = ArgumentReader(def.arg()).Get<bool>("keepdims", true);
  const int ndim = static_cast<int>(x.dims.size());
  ReducePlan plan;
  std::vector<int64_t> y_stride_of_dim(ndim, 0);
  int64_t y_stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (reduced[d]) continue;
    y_stride_of_dim[d] = y_stride;
    y_stride *= x.dims[d];
  }
  for (int d = 0; d < ndim; ++d) {
    if (reduced[d]) {
      plan.reduced_count *= x.dims[d];
      if (keepdims) plan.y_dims.push_back(1);
    } else {
      plan.y_dims.push_back(x.dims[d]);
    }
    if (x.dims[d] == 1) continue;  // index 0 only: merges with anything
    const bool merges = !plan.x_dims.empty() && (plan.y_strides.back() == 0) == reduced[d];
    if (merges) {
      plan.x_dims.back() *= x.dims[d];
      plan.y_strides.back() = y_stride_of_dim[d];
    } else {
      plan.x_dims.push_back(x.dims[d]);
      plan.y_strides.push_back(y_stride_of_dim[d]);
    }
  }
  if (plan.x_dims.empty()) {
    plan.x_dims.push_back(1);
    plan.y_strides.push_back(0);
  }
  return plan;
}

template <bool kMean>
void ReduceOp<kMean>::Run() {
  const Tensor& x = Input(0);
  CheckInputType(*this, 0, {x.dtype()});
  const ReducePlan plan = PlanChecked<kMean>(def(), ShapeOf(x));
  DispatchArithmetic(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* y = Output(0, x.dtype(), plan.y_dims)->template mutable_data<T>();
    ReduceTyped<T, kMean>(plan, x.template data<T>(), y);
  });
}

template <bool kMean>
void ReduceGradientOp<kMean>::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  InferReduceGradientShape<kMean>(def(), in);
  OperatorDef forward = def();
  forward.clear_input();
  forward.add_input(def().input(1));
  const ReducePlan plan = PlanReduce(forward, in[1]);
  const float scale = kMean ? 1.f / static_cast<float>(plan.reduced_count) : 1.f;
  const float* dy = Input(0).template data<float>();
  float* dx = Output(0, DType::kFloat32, in[1].dims)->template mutable_data<float>();
  const int64_t inner = plan.x_dims.back();
  const int64_t stride = plan.y_strides.back();
  ForEachRun(plan, [&](int64_t x_offset, int64_t y_offset) {
    for (int64_t i = 0; i < inner; ++i) dx[x_offset + i] = dy[y_offset + i * stride] * scale;
  });
}

BRAID_OPERATOR_SCHEMA(ReduceSum)
    .Arg("axes", ArgKind::kInts)
    .Arg("keepdims", ArgKind::kInt)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferReduceShape<false>)
    .SetDoc("Y = the sum of X over `axes` (default all); `keepdims` (default 1) keeps them as 1s.");
BRAID_OPERATOR_SCHEMA(ReduceMean)
    .Arg("axes", ArgKind::kInts)
    .Arg("keepdims", ArgKind::kInt)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferReduceShape<true>)
    .SetDoc(
        "Y = the mean of X over `axes` (default all); `keepdims` (default 1) keeps them as 1s.");
BRAID_OPERATOR_SCHEMA(ReduceSumGradient)
    .ArgsOf("ReduceSum")
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(InferReduceGradientShape<false>)
    .SetDoc("ReduceSum's gradient: inputs dY, X; dX = dY repeated over the reduced axes.");
BRAID_OPERATOR_SCHEMA(ReduceMeanGradient)
    .ArgsOf("ReduceMean")
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(InferReduceGradientShape<true>)
    .SetDoc("ReduceMean's gradient: inputs dY, X; dX = dY / count, repeated over the axes.");

BRAID_REGISTER_CPU_OPERATOR(ReduceSum, ReduceOp<false>);
BRAID_REGISTER_CPU_OPERATOR(ReduceMean, ReduceOp<true>);
BRAID_REGISTER_CPU_OPERATOR(ReduceSumGradient, ReduceGradientOp<false>);
BRAID_REGISTER_CPU_OPERATOR(ReduceMeanGradient, ReduceGradientOp<true>);
BRAID_REGISTER_GRADIENT(ReduceSum, ReduceGradient<false>);
BRAID_REGISTER_GRADIENT(ReduceMean, ReduceGradient<true>);

}  // namespace braid
