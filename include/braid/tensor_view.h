// Tensors crossing braid's public API (installed as <braid/tensor_view.h>): what an application
// hands in (InputView: a view of its own memory) and what it gets back (OutputTensor: host memory
// it owns), in any dtype braid supports (<braid/dtype.h>). The Predictor (<braid/predictor.h>) and
// the Session (<braid/session.h>) take and give these.
//
//   std::vector<int64_t> ids = {3, 1, 4};
//   braid::InputView in = braid::InputView::Of(ids.data(), {3});  // int64 [3], read in place
//   braid::OutputTensor out;                                      // filled by a Run or Fetch
//   const float* p = out.data<float>();                           // null unless out is float32
//   if (p != nullptr && out.numel() > 0) std::cout << p[0];
//   std::vector<uint8_t> bytes = std::move(out.bytes);             // taken without a copy
//
// Thread safety: values; InputView's memory is the caller's, and must stay valid and unchanged for
// as long as the call that reads it says.
#ifndef BRAID_TENSOR_VIEW_H_
#define BRAID_TENSOR_VIEW_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "braid/dtype.h"

namespace braid {

// One input: `shape` elements of `dtype` at `data`, caller-owned, only read.
struct InputView {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  const void* data = nullptr;

  template <typename T>
  static InputView Of(const T* data, std::vector<int64_t> shape) {
    return InputView{DTypeOf<T>(), std::move(shape), data};
  }
};

// One output, copied to host memory the caller owns: move `bytes` out to keep it without a copy.
struct OutputTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numel() const;
  // The values as T; nullptr when the output holds another dtype, so check the pointer (or `dtype`)
  // before reading. An empty output of T's dtype gives a pointer (null or not) that must not be
  // read either: check numel().
  template <typename T>
  const T* data() const {
    return DTypeOf<T>() == dtype ? reinterpret_cast<const T*>(bytes.data()) : nullptr;
  }
};

}  // namespace braid

#endif  // BRAID_TENSOR_VIEW_H_
