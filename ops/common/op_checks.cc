#include "ops/common/op_checks.h"

#include "braid/status.h"
#include "runtime/core/argument.h"
#include "runtime/core/shape_inference.h"

namespace braid {

std::string DescribeBlob(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
  return "'" + name + "' " + DTypeName(dtype) + DimsText(dims);
}

std::string DescribeBlob(const std::string& name, const ShapeInfo& info) {
  return DescribeBlob(name, info.dtype, info.dims);
}

std::string DescribeInput(const OperatorBase& op, int i) {
  return DescribeBlob(op.def().input(i), op.Input(i).dtype(), op.Input(i).shape());
}

void ThrowInvalidArgument(const std::string& message) {
  throw Error(Status::InvalidArgument(message));
}

void CheckInputType(const OperatorBase& op, int i, std::initializer_list<DType> allowed) {
  const Tensor& t = op.Input(i);
  bool ok = false;
  std::string names;
  for (DType d : allowed) {
    ok = ok || t.dtype() == d;
    names += (names.empty() ? "" : " or ") + std::string(DTypeName(d));
  }
  if (!ok) ThrowInvalidArgument("input " + DescribeInput(op, i) + " must be " + names);
  if (!t.has_storage() || t.capacity() < t.nbytes()) {
    ThrowInvalidArgument("input " + DescribeInput(op, i) + " has no data (never written)");
  }
}

void CheckSameTypeAndShape(const OperatorDef& def, const std::vector<ShapeInfo>& in, int i) {
  if (in[i].dtype == in[0].dtype && in[i].dims == in[0].dims) return;
  ThrowInvalidArgument("input " + DescribeBlob(def.input(i), in[i]) +
                       " must have the type and shape of input " +
                       DescribeBlob(def.input(0), in[0]));
}

Layout InputsLayout(const OperatorBase& op) {
  for (int i = 1; i < op.InputSize(); ++i) {
    if (op.Input(i).layout() != op.Input(0).layout()) {
      ThrowInvalidArgument("input " + DescribeInput(op, i) + " and input " +
                           DescribeInput(op, 0) + " must have one layout");
    }
  }
  return op.InputSize() > 0 ? op.Input(0).layout() : Layout::kPlain;
}

std::vector<ShapeInfo> InputShapeInfos(const OperatorBase& op) {
  std::vector<ShapeInfo> in;
  for (int i = 0; i < op.InputSize(); ++i) in.push_back(ShapeOf(op.Input(i)));
  return in;
}

int CanonicalAxis(const OperatorDef& def, const std::string& name, int fallback, int ndim,
                  bool allow_end) {
  int axis = ArgumentReader(def.arg()).Get<int>(name, fallback);
  int canonical = axis < 0 ? axis + ndim : axis;
  int limit = allow_end ? ndim : ndim - 1;
  if (canonical < 0 || canonical > limit) {
    ThrowInvalidArgument("argument '" + name + "' = " + std::to_string(axis) +
                         " is out of range for " + std::to_string(ndim) + " dims");
  }
  return canonical;
}

int64_t SizeToDim(const std::vector<int64_t>& dims, int k) {
  int64_t n = 1;
  for (int i = 0; i < k; ++i) n *= dims[i];
  return n;
}

int64_t SizeFromDim(const std::vector<int64_t>& dims, int k) {
  int64_t n = 1;
  for (size_t i = k; i < dims.size(); ++i) n *= dims[i];
  return n;
}

}  // namespace braid
