#include "runtime/serve/tensor_views.h"

#include <cstring>

#include "braid/status.h"
#include "runtime/core/device_context.h"
#include "runtime/core/element_count.h"

namespace braid {

int64_t OutputTensor::numel() const { return ElementCount(shape); }
int64_t OutputView::numel() const { return ElementCount(shape); }

Device ViewDevice(const std::string& device, const void* stream, const std::string& what) {
  if (device.empty()) {
    if (stream != nullptr) {
      throw Error(Status::InvalidArgument(what + " is host memory but names a stream"));
    }
    return Device{};
  }
  Device parsed;
  const Status usable = StatusFromCall([&] {
    parsed = ParseDevice(device);
    GetDeviceContext(parsed);
  });
  if (!usable.ok()) {
    throw Error(Status::InvalidArgument(what + " is on '" + device + "': " + usable.message()));
  }
  if (parsed.is_host() && stream != nullptr) {
    throw Error(
        Status::InvalidArgument(what + " is host memory (" + device + ") but names a stream"));
  }
  return parsed;
}

Tensor ViewOf(const InputView& view, const std::string& what) {
  const Device device = ViewDevice(view.device, view.stream, what);
  int64_t numel = 0;
  try {
    numel = ElementCount(view.shape, view.dtype);
  } catch (const Error& e) {
    throw Error(Status::InvalidArgument(what + ": " + e.status().message()));
  }
  if (view.data == nullptr && numel > 0) {
    throw Error(Status::InvalidArgument(what + " has no data"));
  }
  Tensor tensor(device);
  tensor.Resize(view.dtype, view.shape);
  tensor.SetExternalStorage(const_cast<void*>(view.data), tensor.nbytes());
  return tensor;
}

void WaitForWriters(const InputView& view) {
  if (view.device.empty()) return;
  const Device device = ParseDevice(view.device);
  if (!device.is_host()) GetDeviceContext(device)->WaitForApplicationStream(view.stream);
}

void CopyOut(const Tensor& tensor, OutputTensor* out) {
  Tensor host_copy;
  const Tensor* host = &tensor;
  if (!tensor.device().is_host()) {
    host_copy.CopyFrom(tensor);
    host = &host_copy;
  }
  out->dtype = host->dtype();
  out->shape = host->shape();
  out->bytes.resize(host->nbytes());
  if (host->nbytes() > 0) std::memcpy(out->bytes.data(), host->raw_data(), host->nbytes());
}

void CopyOut(const Tensor& tensor, OutputView* out, const std::string& what) {
  const Device device = ViewDevice(out->device, nullptr, what);
  out->dtype = tensor.dtype();
  out->shape = tensor.shape();
  const int64_t bytes = static_cast<int64_t>(tensor.nbytes());
  if (bytes > out->capacity_bytes) {
    throw Error(Status::InvalidArgument(
        what + " needs " + std::to_string(bytes) + " bytes (" + DTypeName(tensor.dtype()) + " " +
        "of " + std::to_string(tensor.numel()) + " elements), its buffer holds " +
        std::to_string(out->capacity_bytes)));
  }
  if (bytes == 0) return;
  if (out->data == nullptr) throw Error(Status::InvalidArgument(what + " has no data"));
  Tensor into(device);
  into.Resize(tensor.dtype(), tensor.shape());
  into.SetExternalStorage(out->data, static_cast<size_t>(out->capacity_bytes));
  into.CopyFrom(tensor);
}

}  // namespace braid
