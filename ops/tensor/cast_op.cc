#include "ops/tensor/cast_op.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/common/dtype_dispatch.h"
#include "ops/common/op_checks.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/tensor_proto_dtype.h"

namespace braid {
namespace {

// The dtype Cast op `def` converts to; throws when `to` is missing.
DType TargetDType(const OperatorDef& def) {
  const std::optional<DType> to = CastTypeArgument(def, "to");
  if (!to) {
    ThrowInvalidArgument(std::string("Cast needs the argument 'to' (") + kTensorProtoDTypes + ")");
  }
  return *to;
}

// Checks X's type against `from_type`, if given.
void CheckFromType(const OperatorDef& def, const ShapeInfo& x) {
  const std::optional<DType> from = CastTypeArgument(def, "from_type");
  if (from && *from != x.dtype) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(0), x) + " must be " + DTypeName(*from) +
                         " as argument 'from_type' states");
  }
}

template <typename To, typename From>
To Convert(From value, const OperatorBase& op, int64_t index) {
  constexpr bool kFromFloating = std::is_floating_point_v<From> || std::is_same_v<From, Float16>;
  if constexpr (kFromFloating && std::is_integral_v<To> && !std::is_same_v<To, bool>) {
    const double v = static_cast<double>(value);
    const double low = static_cast<double>(std::numeric_limits<To>::lowest()) - 1;
    const double high = static_cast<double>(std::numeric_limits<To>::max()) + 1;
    if (!(v > low && v < high)) {
      ThrowInvalidArgument("input " + DescribeInput(op, 0) + " holds " + std::to_string(v) +
                           " at element " + std::to_string(index) + ", which " +
                           DTypeName(DTypeOf<To>()) + " cannot represent");
    }
  }
  if constexpr (std::is_same_v<To, Float16> && std::is_same_v<From, double>) {
    return Float16::FromBits(DoubleToHalfBits(value));  // one rounding, not two through float
  } else {
    return static_cast<To>(value);
  }
}

template <typename To, typename From>
void ConvertAll(const OperatorBase& op, const From* x, int64_t n, To* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = Convert<To>(x[i], op, i);
}

GradientOps CastGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  const std::optional<DType> from = CastTypeArgument(r.op, "from_type");
  if (!from) {
    ThrowInvalidArgument("the gradient of Cast needs the argument 'from_type' (X's type)");
  }
  OperatorDef back = MakeGradientOp(r.op, "Cast", {r.output_grads[0]}, {r.input_grads[0]});
  back.clear_arg();
  Argument* to = back.add_arg();
  to->set_name("to");
  to->set_i(TensorProtoDataType(*from));
  Argument* from_type = back.add_arg();
  from_type->set_name("from_type");
  from_type->set_i(TensorProtoDataType(TargetDType(r.op)));
  return {{back}, {true}};
}

}  // namespace

std::optional<DType> CastTypeArgument(const OperatorDef& def, const std::string& name) {
  const auto arg = std::find_if(def.arg().begin(), def.arg().end(),
                                [&](const Argument& a) { return a.name() == name; });
  if (arg == def.arg().end()) return std::nullopt;
  std::optional<DType> dtype;
  std::string given;
  if (arg->has_i()) {
    given = std::to_string(arg->i());
    dtype = DTypeOfTensorProtoType(static_cast<int>(arg->i()));
  } else if (arg->has_s()) {
    given = "'" + arg->s() + "'";
    std::string upper = arg->s();
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return std::toupper(c); });
    TensorProto::DataType number;
    if (TensorProto::DataType_Parse(upper, &number)) dtype = DTypeOfTensorProtoType(number);
  } else {
    ThrowInvalidArgument("argument '" + name + "' must be a type number (i) or name (s)");
  }
  if (!dtype) {
    ThrowInvalidArgument("argument '" + name + "' = " + given + " is not a supported type (" +
                         kTensorProtoDTypes + ")");
  }
  return dtype;
}

void CastOp::Run() {
  const Tensor& x = Input(0);
  CheckInputType(*this, 0, {x.dtype()});
  CheckFromType(def(), ShapeOf(x));
  const DType to = TargetDType(def());
  Tensor* y = Output(0, to, x.shape());
  DispatchAnyDType(x.dtype(), [&](auto from_zero) {
    using From = decltype(from_zero);
    DispatchAnyDType(to, [&](auto to_zero) {
      using To = decltype(to_zero);
      ConvertAll(*this, x.data<From>(), x.numel(), y->mutable_data<To>());
    });
  });
}

BRAID_OPERATOR_SCHEMA(Cast)
    .Arg("to", ArgKind::kInt | ArgKind::kString)
    .Arg("from_type", ArgKind::kInt | ArgKind::kString)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 1) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      CheckFromType(def, in[0]);
      return std::vector<ShapeInfo>{ShapeInfo{TargetDType(def), in[0].dims, true}};
    })
    .SetDoc("Y = X converted to the type `to` (TensorProto.DataType number or name).");

BRAID_REGISTER_CPU_OPERATOR(Cast, CastOp);
BRAID_REGISTER_GRADIENT(Cast, CastGradient);

}  // namespace braid
