// Tensors crossing braid's public API (installed as <braid/tensor_view.h>): what an application
// hands in (InputView: a view of its own memory), what it gets back (OutputTensor: host memory it
// owns), and where it wants an answer written (OutputView: its own memory, host or device), in any
// dtype braid supports (<braid/dtype.h>). The Predictor (<braid/predictor.h>) and the Session
// (<braid/session.h>) take and give these.
//
//   std::vector<int64_t> ids = {3, 1, 4};
//   braid::InputView in = braid::InputView::Of(ids.data(), {3});  // int64 [3], read in place
//   braid::OutputTensor out;                                      // filled by a Run or Fetch
//   const float* p = out.data<float>();                           // null unless out is float32
//   if (p != nullptr && out.numel() > 0) std::cout << p[0];
//   std::vector<uint8_t> bytes = std::move(out.bytes);             // taken without a copy
//
// Device tensors: memory of a GPU braid runs on, named by `device` ("cuda:0"), in and out:
//
//   // `image` and `probs`: cudaMalloc'ed by the application; `stream`: its cudaStream_t
//   braid::InputView in = braid::InputView::OnDevice(image, {1, 3, 224, 224}, "cuda:0", stream);
//   braid::OutputView answer = braid::OutputView::Into(probs, 1000, "cuda:0");
//
// An InputView on a device is read once the work its application queued on `stream` so far (at
// the call) has run: braid records an event there and waits for it on the host, within the
// request's deadline (no stream given: CUDA's legacy default stream; a program built with
// per-thread default streams passes cudaStreamPerThread). An OutputView is written before the call
// that fills it returns, so any stream may read it then. Where the memory is the device the model
// runs on, inputs are read in place; copies between devices of one kind run on the devices (peer to
// peer between GPUs), others go through the host. A copy waits for the devices it touches to finish
// the work queued on them (as cudaMemcpy does). The memory must be the device's own (on cuda,
// cudaPointerGetAttributes must place it on that GPU; braid uses the GPU's primary context, which
// the CUDA runtime shares with the application), and a stream the device's.
//
// Thread safety: values; the memory views point to is the caller's, and must stay valid (and an
// input's unchanged) for as long as the call that reads or writes it says. braid never reads or
// writes it after that call.
#ifndef BRAID_TENSOR_VIEW_H_
#define BRAID_TENSOR_VIEW_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "braid/dtype.h"

namespace braid {

// One input: `shape` elements of `dtype` at `data`, caller-owned, only read.
struct InputView {
  InputView() = default;
  InputView(DType dtype, std::vector<int64_t> shape, const void* data, std::string device = "",
            void* stream = nullptr)
      : dtype(dtype),
        shape(std::move(shape)),
        data(data),
        device(std::move(device)),
        stream(stream) {}

  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  // Where `data` is: "" (or "cpu:N") host memory; "cuda:N" memory of that GPU (a build with the
  // CUDA backend); "sim:N" a simulated GPU's (braid's own tests).
  std::string device;
  // With a device: the application's stream whose work writes `data` (a cudaStream_t on cuda; null:
  // CUDA's legacy default stream). braid reads `data` once the work queued on it by the call has
  // run (see the top of this file). Must be null for host memory.
  void* stream = nullptr;

  template <typename T>
  static InputView Of(const T* data, std::vector<int64_t> shape) {
    return InputView(DTypeOf<T>(), std::move(shape), data);
  }
  template <typename T>
  static InputView OnDevice(const T* data, std::vector<int64_t> shape, std::string device,
                            void* stream = nullptr) {
    return InputView(DTypeOf<T>(), std::move(shape), data, std::move(device), stream);
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

// One output, written into memory the caller owns: `capacity_bytes` at `data`, on `device` (as
// InputView's), holding `dtype`. braid sets `shape` to the output's and writes it when it fits: an
// output of another dtype, or larger than the capacity, is InvalidArgument with nothing written
// (no output of that call), `shape` saying what it needs.
struct OutputView {
  OutputView() = default;
  OutputView(void* data, int64_t capacity_bytes, std::string device = "",
             DType dtype = DType::kFloat32)
      : data(data), capacity_bytes(capacity_bytes), device(std::move(device)), dtype(dtype) {}

  void* data = nullptr;
  int64_t capacity_bytes = 0;
  std::string device;
  DType dtype = DType::kFloat32;  // what the buffer holds: the output must be of this dtype
  std::vector<int64_t> shape;     // set by braid

  int64_t numel() const;
  // Room for `capacity` elements of T at `data`.
  template <typename T>
  static OutputView Into(T* data, int64_t capacity, std::string device = "") {
    return OutputView(data, capacity * static_cast<int64_t>(sizeof(T)), std::move(device),
                      DTypeOf<T>());
  }
};

}  // namespace braid

#endif  // BRAID_TENSOR_VIEW_H_
