// Checks ops make on their inputs and arguments, with errors that name the blobs and shapes.
//
// Shape rules are written once, over (blob name, type, dims), so an op's schema (shape inference,
// which sees only the OperatorDef and ShapeInfo) and its kernel (which sees tensors) apply the same
// rule and report the same message:
//
//   CheckInputType(*this, 0, {DType::kFloat32});  // "input 'X' int32[2,3] must be float32"
//   int axis = CanonicalAxis(def(), "axis", -1, 3);   // 2
//
// Every check throws braid::Error (InvalidArgument); the executor prefixes the net and op label.
// All functions are pure and thread-safe.
#ifndef BRAID_OPS_COMMON_OP_CHECKS_H_
#define BRAID_OPS_COMMON_OP_CHECKS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "braid/dtype.h"
#include "proto/braid.pb.h"
#include "runtime/core/dims_text.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// "'X' float32[2,3]": how errors name a blob.
std::string DescribeBlob(const std::string& name, DType dtype, const std::vector<int64_t>& dims);
std::string DescribeBlob(const std::string& name, const ShapeInfo& info);
std::string DescribeInput(const OperatorBase& op, int i);
[[noreturn]] void ThrowInvalidArgument(const std::string& message);

// Input i's type is one of `allowed` and its data has been written.
void CheckInputType(const OperatorBase& op, int i, std::initializer_list<DType> allowed);
// Input i has input 0's type and shape (the n-ary elementwise rule).
void CheckSameTypeAndShape(const OperatorDef& def, const std::vector<ShapeInfo>& in, int i);
// The layout every input of `op` is in (runtime/core/tensor.h); throws when they differ.
// Elementwise ops (OpSchema::LayoutFollowsInputs) read it before writing (a write resets an
// in-place input's layout) and give it to their outputs.
Layout InputsLayout(const OperatorBase& op);
// ShapeInfo of every input of `op`, as the schema sees them.
std::vector<ShapeInfo> InputShapeInfos(const OperatorBase& op);

// The integer argument `name` (default `fallback`) as an axis in [0, ndim]: negative counts from
// the end (-1 is ndim - 1). `ndim` itself is allowed when `allow_end` (a split after every dim).
int CanonicalAxis(const OperatorDef& def, const std::string& name, int fallback, int ndim,
                  bool allow_end = false);
// Products of dims[0, k) and dims[k, end).
int64_t SizeToDim(const std::vector<int64_t>& dims, int k);
int64_t SizeFromDim(const std::vector<int64_t>& dims, int k);

}  // namespace braid

#endif  // BRAID_OPS_COMMON_OP_CHECKS_H_
