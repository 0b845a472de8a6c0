// Accuracy on CUDA devices (ops/loss/accuracy_op.h).
//
// Out-of-range labels: the labels are in device memory, so the host cannot check them as the CPU
// kernel does (it throws). Here any label outside [0, D) makes the accuracy NaN.
//
// One thread scans one row (rows are few, classes at most thousands); the count of correct rows is
// summed in a fixed order (ops/common/cuda_reduce.cuh), exactly, as the CPU counts.
#include <cmath>
#include <limits>

#include "ops/common/cuda_kernel.h"
#include "ops/common/cuda_reduce.cuh"
#include "ops/common/op_checks.h"
#include "ops/loss/accuracy_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

// 1 when fewer than top_k scores of row i rank above its label's (ties go to the lower index), 0
// otherwise, NaN for a label outside [0, d).
struct InTopKTerm {
  const float* x;
  const int32_t* labels;
  int64_t d;
  int top_k;
  __device__ double operator()(int64_t i) const {
    const int32_t label = labels[i];
    if (label < 0 || label >= d) return std::numeric_limits<double>::quiet_NaN();
    const float* scores = x + i * d;
    const float score = scores[label];
    int above = 0;
    for (int64_t j = 0; j < d && above < top_k; ++j) {
      if (scores[j] > score || (scores[j] == score && j < label)) ++above;
    }
    return above < top_k ? 1.0 : 0.0;
  }
};

struct StoreAccuracy {
  int64_t n;
  float* accuracy;
  __device__ void operator()(double correct) const {
    if (isnan(correct)) {
      *accuracy = std::numeric_limits<float>::quiet_NaN();
      return;
    }
    // As the CPU: an integer count over an integer number of rows, each converted to float.
    *accuracy = n > 0 ? static_cast<float>(static_cast<int64_t>(correct)) / static_cast<float>(n)
                      : 0.f;
  }
};

class AccuracyCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    CheckInputType(*this, 0, {DType::kFloat32});
    CheckInputType(*this, 1, {DType::kInt32});
    const ClassScores s = CheckAccuracyInputs(def(), InputShapeInfos(*this));
    float* accuracy = Output(0, DType::kFloat32, {})->mutable_data<float>();
    const InTopKTerm term{Input(0).data<float>(), Input(1).data<int32_t>(), s.d,
                          args().Get<int>("top_k", 1)};
    QueueDeterministicSum<double>(s.n, term, StoreAccuracy{s.n, accuracy}, "Accuracy count");
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Accuracy, kCuda, "", AccuracyCudaOp);

}  // namespace braid
