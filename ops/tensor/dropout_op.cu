// Dropout and DropoutGrad on CUDA devices (ops/tensor/dropout_op.h).
//
// The mask comes from a cuRAND Philox generator per op, seeded once from the op's rng(): the same
// seed gives the same masks run after run of a fresh net, but not the CPU kernel's masks. An
// element is kept when its uniform draw in (0, 1] exceeds `ratio`: probability 1 - ratio.
#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "ops/tensor/dropout_op.h"
#include "ops/tensor/reshape_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

// Reads x[i] before writing y[i]: y may be x.
__global__ void DropoutKernel(const float* x, const float* uniform, float ratio, float scale,
                              float* y, bool* mask, int64_t n) {
  BRAID_CUDA_KERNEL_LOOP(i, n) {
    const bool keep = uniform[i] > ratio;
    const float value = x[i];
    mask[i] = keep;
    y[i] = keep ? value * scale : 0.f;
  }
}

__global__ void DropoutGradKernel(const float* dy, const bool* mask, float scale, float* dx,
                                  int64_t n) {
  BRAID_CUDA_KERNEL_LOOP(i, n) dx[i] = mask[i] ? dy[i] * scale : 0.f;
}

class DropoutCudaOp final : public OperatorBase {
 public:
  DropoutCudaOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), ratio_(DropoutRatio(def)), is_test_(DropoutIsTest(def)) {
    if (!is_test_ && OutputSize() < 2) {
      ThrowInvalidArgument("Dropout with is_test = 0 needs the mask output");
    }
  }
  // The generator's state lives on the op's device: destroyed there.
  ~DropoutCudaOp() override { DestroyCurandGenerator(generator_, device()); }

  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    const Tensor& x = Input(0);
    const int64_t n = x.numel();
    bool* mask =
        OutputSize() == 2 ? Output(1, DType::kBool, x.shape())->mutable_data<bool>() : nullptr;
    if (is_test_) {
      CopyReshaped(x, Output(0), x.shape());
      if (mask != nullptr && n > 0) {  // true is the byte 1
        CheckCuda(cudaMemsetAsync(mask, 1, static_cast<size_t>(n), CurrentCudaStream()),
                  "cudaMemsetAsync", device());
      }
      return;
    }
    float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    if (n == 0) return;
    DeviceScratch uniform(static_cast<size_t>(n) * sizeof(float));
    auto* draws = static_cast<float*>(uniform.get());
    CheckCurand(curandSetStream(Generator(), CurrentCudaStream()), "curandSetStream");
    CheckCurand(curandGenerateUniform(Generator(), draws, static_cast<size_t>(n)),
                "curandGenerateUniform");
    DropoutKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
        x.data<float>(), draws, ratio_, DropoutKeptScale(ratio_), y, mask, n);
    CheckCudaLaunch("DropoutKernel");
  }

 private:
  // Made on the first training run, on the op's device (cuRAND allocates its state there, so it is
  // made holding the device's lock: ops/common/cuda_kernel.h).
  curandGenerator_t Generator() {
    if (generator_ == nullptr) generator_ = CreateCurandGenerator(rng()());
    return generator_;
  }

  const float ratio_;
  const bool is_test_;
  curandGenerator_t generator_ = nullptr;
};

class DropoutGradCudaOp final : public OperatorBase {
 public:
  DropoutGradCudaOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), ratio_(DropoutRatio(def)), is_test_(DropoutIsTest(def)) {}

  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    if (InputSize() == 2) CheckInputType(*this, 1, {DType::kBool});
    InferDropoutGradShape(def(), InputShapeInfos(*this));
    const Tensor& dy = Input(0);
    if (is_test_) {
      CopyReshaped(dy, Output(0), dy.shape());
      return;
    }
    const int64_t n = dy.numel();
    float* dx = Output(0, DType::kFloat32, dy.shape())->mutable_data<float>();
    DropoutGradKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(
        dy.data<float>(), Input(1).data<bool>(), DropoutKeptScale(ratio_), dx, n);
    CheckCudaLaunch("DropoutGradKernel");
  }

 private:
  const float ratio_;
  const bool is_test_;
};

}  // namespace

BRAID_REGISTER_OPERATOR(Dropout, kCuda, "", DropoutCudaOp);
BRAID_REGISTER_OPERATOR(DropoutGrad, kCuda, "", DropoutGradCudaOp);

}  // namespace braid
