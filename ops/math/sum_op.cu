// Sum on CUDA devices (ops/math/sum_op.h): y = x0 + x1 + ..., added left to right as on the CPU.
#include <algorithm>
#include <vector>

#include "ops/common/cuda_elementwise.cuh"
#include "ops/common/dtype_dispatch.h"
#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

// Inputs one launch adds, passed by value; more are added by further launches onto y.
inline constexpr int kSumInputsPerLaunch = 8;

template <typename T>
struct SumInputs {
  const T* x[kSumInputsPerLaunch];
  int count;
};

// y[i] = (acc ? acc[i] : x[0][i]) + the remaining x[k][i] in order. acc and x[0] may be y.
template <typename T>
__global__ void SumKernel(SumInputs<T> in, const T* acc, T* y, int64_t n) {
  BRAID_CUDA_KERNEL_LOOP(i, n) {
    int k = 0;
    T sum = acc != nullptr ? acc[i] : in.x[k++][i];
    for (; k < in.count; ++k) sum += in.x[k][i];
    y[i] = sum;
  }
}

class SumCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32, DType::kInt32, DType::kInt64});
    for (int i = 1; i < InputSize(); ++i) CheckInputType(*this, i, {Input(0).dtype()});
    const std::vector<ShapeInfo> shapes = InputShapeInfos(*this);
    for (int i = 1; i < InputSize(); ++i) CheckSameTypeAndShape(def(), shapes, i);
    DispatchArithmetic(Input(0).dtype(), [this](auto zero) { RunTyped<decltype(zero)>(); });
  }

 private:
  template <typename T>
  void RunTyped() {
    const int64_t n = Input(0).numel();
    T* y = Output(0, Input(0).dtype(), Input(0).shape())->template mutable_data<T>();
    const T* acc = nullptr;  // the first launch starts from x0, later ones from y
    for (int first = 0; first < InputSize(); first += kSumInputsPerLaunch) {
      SumInputs<T> in{};
      in.count = std::min(kSumInputsPerLaunch, InputSize() - first);
      for (int k = 0; k < in.count; ++k) in.x[k] = Input(first + k).template data<T>();
      SumKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(in, acc, y, n);
      CheckCudaLaunch("SumKernel");
      acc = y;
    }
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Sum, kCuda, "", SumCudaOp);

}  // namespace braid
