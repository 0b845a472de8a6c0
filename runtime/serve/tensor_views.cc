#include "runtime/serve/tensor_views.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "braid/status.h"
#include "runtime/core/element_count.h"

namespace braid {

int64_t OutputTensor::numel() const { return ElementCount(shape); }
int64_t OutputView::numel() const { return ElementCount(shape); }

Device ViewDevice(const std::string& device, const void* data, const void* stream,
                  const std::string& what) {
  if (device.empty()) {
    if (stream != nullptr) {
      throw Error(Status::InvalidArgument(what + " is host memory but names a stream"));
    }
    return Device{};
  }
  Device parsed;
  DeviceContext* context = nullptr;
  const Status usable = StatusFromCall([&] {
    parsed = ParseDevice(device);
    context = GetDeviceContext(parsed);
  });
  if (!usable.ok()) {
    throw Error(Status::InvalidArgument(what + " is on '" + device + "': " + usable.message()));
  }
  if (parsed.is_host() && stream != nullptr) {
    throw Error(
        Status::InvalidArgument(what + " is host memory (" + device + ") but names a stream"));
  }
  context->CheckApplicationMemory(data, what);
  return parsed;
}

Tensor ViewOf(const InputView& view, const std::string& what) {
  ViewDevice(view.device, view.data, view.stream, what);
  int64_t numel = 0;
  try {
    numel = ElementCount(view.shape, view.dtype);
  } catch (const Error& e) {
    throw Error(Status::InvalidArgument(what + ": " + e.status().message()));
  }
  if (view.data == nullptr && numel > 0) {
    throw Error(Status::InvalidArgument(what + " has no data"));
  }
  return TensorOver(view);
}

Tensor TensorOver(const InputView& view) {
  Tensor tensor(view.device.empty() ? Device{} : ParseDevice(view.device));
  tensor.Resize(view.dtype, view.shape);
  tensor.SetExternalStorage(const_cast<void*>(view.data), tensor.nbytes());
  return tensor;
}

StreamMarks MarkWriters(const std::map<std::string, InputView>& inputs, const std::string& label) {
  StreamMarks marks;
  for (const auto& input : inputs) {  // no structured binding: the lambda below reads the view
    const std::string& name = input.first;
    const InputView& view = input.second;
    if (view.device.empty()) continue;
    const Device device = ParseDevice(view.device);
    if (device.is_host()) continue;
    const Status marked = StatusFromCall(
        [&] { marks.push_back(GetDeviceContext(device)->MarkApplicationStream(view.stream)); });
    if (!marked.ok()) {
      throw Error(Status(marked.code(), label + ": input '" + name + "' on " + view.device + ": " +
                                            marked.message()));
    }
  }
  return marks;
}

void WaitForWriters(const StreamMarks& marks, const RunStop& stop, const std::string& label) {
  for (const std::unique_ptr<Event>& mark : marks) {
    if (!stop.can_fire()) {
      mark->HostWait();
      continue;
    }
    // Polled, doubling the pause to 1 ms: quick for a stream nearly done, cheap for a slow one.
    auto pause = std::chrono::microseconds(20);
    while (!mark->Query()) {
      if (stop.Fired()) {
        throw Error(stop.Why(label + ": waited for the applications' streams that write its "
                                     "inputs, and did not run"));
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
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

void CheckFits(const Tensor& tensor, OutputView* out, const std::string& what) {
  ViewDevice(out->device, out->data, nullptr, what);
  out->shape = tensor.shape();
  if (tensor.dtype() != out->dtype) {
    throw Error(Status::InvalidArgument(what + " is " + DTypeName(tensor.dtype()) +
                                        ", its buffer holds " + DTypeName(out->dtype)));
  }
  const int64_t bytes = static_cast<int64_t>(tensor.nbytes());
  if (bytes > out->capacity_bytes) {
    throw Error(Status::InvalidArgument(
        what + " needs " + std::to_string(bytes) + " bytes (" + std::to_string(tensor.numel()) +
        " elements), its buffer holds " + std::to_string(out->capacity_bytes)));
  }
  if (bytes > 0 && out->data == nullptr) {
    throw Error(Status::InvalidArgument(what + " has no data"));
  }
}

void CopyOut(const Tensor& tensor, const OutputView& out) {
  if (tensor.nbytes() == 0) return;
  Tensor into(ParseDevice(out.device.empty() ? "cpu:0" : out.device));
  into.Resize(tensor.dtype(), tensor.shape());
  into.SetExternalStorage(out.data, static_cast<size_t>(out.capacity_bytes));
  into.CopyFrom(tensor);
}

}  // namespace braid
