// Concat and Split on CUDA devices (ops/tensor/concat_op.h, split_op.h): each piece is one strided
// device-to-device copy on the current stream (cudaMemcpy2DAsync: `outer` rows, the piece's run
// per row). Concat's split_info is written by a kernel; Split's sizes from an input are copied to
// the host (the op then runs synchronously: ops/tensor/int_list_input.h).
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/common/cuda_elementwise.cuh"
#include "ops/common/op_checks.h"
#include "ops/tensor/concat_op.h"
#include "ops/tensor/int_list_input.h"
#include "ops/tensor/split_op.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

// Where piece i's run lies in each row of the whole, in bytes.
struct PieceRun {
  size_t whole_offset = 0;
  size_t width = 0;
};

std::vector<PieceRun> PieceRuns(const AxisLayout& layout, size_t element_bytes) {
  std::vector<PieceRun> runs;
  size_t offset = 0;
  for (int64_t size : layout.sizes) {
    const size_t width = static_cast<size_t>(size * layout.inner) * element_bytes;
    runs.push_back({offset, width});
    offset += width;
  }
  return runs;
}

// The bytes of one row of the whole: every piece's run.
size_t WholePitch(const std::vector<PieceRun>& runs) {
  return runs.empty() ? 0 : runs.back().whole_offset + runs.back().width;
}

void CopyBytes(void* dst, const void* src, size_t bytes) {
  CheckCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, CurrentCudaStream()),
            "cudaMemcpyAsync", CurrentDevice());
}

// Copies `rows` runs of `width` bytes between device buffers with the given row pitches.
// cudaMemcpy2DAsync refuses pitches above cudaDevAttrMaxPitch (2^31 - 1 bytes), which a concat
// along axis 0 (one row: the pitch is the whole tensor) reaches at 2 GiB. Contiguous runs are
// therefore one plain copy, and rows too far apart are copied one by one.
void CopyRows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
              int64_t rows) {
  if (width == 0 || rows == 0) return;
  if (rows == 1 || (dst_pitch == width && src_pitch == width)) {
    CopyBytes(dst, src, width * static_cast<size_t>(rows));
    return;
  }
  constexpr size_t kMaxPitch = std::numeric_limits<int32_t>::max();
  if (dst_pitch > kMaxPitch || src_pitch > kMaxPitch) {
    for (int64_t r = 0; r < rows; ++r) {
      CopyBytes(static_cast<char*>(dst) + static_cast<size_t>(r) * dst_pitch,
                static_cast<const char*>(src) + static_cast<size_t>(r) * src_pitch, width);
    }
    return;
  }
  CheckCuda(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, static_cast<size_t>(rows),
                              cudaMemcpyDeviceToDevice, CurrentCudaStream()),
            "cudaMemcpy2DAsync", CurrentDevice());
}

class ConcatCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {Input(0).dtype()});
    const AxisLayout layout = ComputeConcatLayout(def(), InputShapeInfos(*this));
    const DType dtype = Input(0).dtype();
    char* whole = static_cast<char*>(Output(0, dtype, layout.whole_dims)->raw_mutable_data(dtype));
    const std::vector<PieceRun> runs = PieceRuns(layout, DTypeSize(dtype));
    const size_t pitch = WholePitch(runs);
    for (int i = 0; i < InputSize(); ++i) {
      CopyRows(whole + runs[i].whole_offset, pitch, Input(i).raw_data(), runs[i].width,
               runs[i].width, layout.outer);
    }
    int32_t* split_info = Output(1, DType::kInt32, {InputSize()})->mutable_data<int32_t>();
    WriteValuesAsync(layout.sizes, split_info);
  }
};

class SplitCudaOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    const Tensor& input = Input(0);
    CheckInputType(*this, 0, {input.dtype()});
    const AxisLayout layout = ComputeSplitLayout(
        def(), ShapeOf(input), InputSize() == 2 ? ReadIntList(*this, 1) : std::vector<int64_t>{});
    const DType dtype = input.dtype();
    const std::vector<PieceRun> runs = PieceRuns(layout, DTypeSize(dtype));
    const size_t pitch = WholePitch(runs);
    const char* whole = static_cast<const char*>(input.raw_data());
    for (int i = 0; i < OutputSize(); ++i) {
      void* piece = Output(i, dtype, layout.piece_dims[i])->raw_mutable_data(dtype);
      CopyRows(piece, runs[i].width, whole + runs[i].whole_offset, pitch, runs[i].width,
               layout.outer);
    }
  }
};

}  // namespace

BRAID_REGISTER_OPERATOR(Concat, kCuda, "", ConcatCudaOp);
BRAID_REGISTER_OPERATOR(Split, kCuda, "", SplitCudaOp);

}  // namespace braid
