// ConstantFill on CUDA devices (ops/fill/constant_fill_op.h): every type the CPU kernel writes
// (float32, float64, int32, int64, uint8, bool), with the shape from the `shape` argument or the
// input's shape. input_as_shape is refused when the op is built (ops/fill/cuda_fill.h).
#include "ops/fill/constant_fill_op.h"
#include "ops/fill/cuda_fill.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

class ConstantFillCudaOp final : public ConstantFillOp {
 public:
  ConstantFillCudaOp(const OperatorDef& def, Workspace* ws) : ConstantFillOp(def, ws) {
    RefuseShapeFromDevice(*this);
  }

 protected:
  void Fill(Tensor* output) override {
    const int64_t n = output->numel();
    switch (output->dtype()) {
      case DType::kFloat32:
        return QueueConstant(output->mutable_data<float>(), n, static_cast<float>(float_value_));
      case DType::kFloat64:
        return QueueConstant(output->mutable_data<double>(), n, float_value_);
      case DType::kInt32:
        return QueueConstant(output->mutable_data<int32_t>(), n, static_cast<int32_t>(int_value_));
      case DType::kInt64:
        return QueueConstant(output->mutable_data<int64_t>(), n, int_value_);
      case DType::kUInt8:
        return QueueConstant(output->mutable_data<uint8_t>(), n, static_cast<uint8_t>(int_value_));
      case DType::kBool:
        return QueueConstant(output->mutable_data<bool>(), n,
                             int_value_ != 0 || float_value_ != 0);
      case DType::kFloat16:  // the same 16 bits, filled as integers
        return QueueConstant(reinterpret_cast<uint16_t*>(output->mutable_data<Float16>()), n,
                             Float16(static_cast<float>(float_value_)).bits());
    }
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(ConstantFill, kCuda, "", ConstantFillCudaOp);

}  // namespace braid
