#include "runtime/serve/tensor_views.h"

#include <cstring>

#include "braid/status.h"
#include "runtime/core/element_count.h"

namespace braid {

int64_t OutputTensor::numel() const { return ElementCount(shape); }

Tensor HostView(const InputView& view, const std::string& what) {
  int64_t numel = 0;
  try {
    numel = ElementCount(view.shape, view.dtype);
  } catch (const Error& e) {
    throw Error(Status::InvalidArgument(what + ": " + e.status().message()));
  }
  if (view.data == nullptr && numel > 0) {
    throw Error(Status::InvalidArgument(what + " has no data"));
  }
  Tensor host(view.dtype, view.shape);
  host.SetExternalStorage(const_cast<void*>(view.data), host.nbytes());
  return host;
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

}  // namespace braid
