#include "runtime/core/tensor.h"

#include <algorithm>
#include <cstring>

#include <glog/logging.h>

#include "braid/status.h"
#include "runtime/core/device_context.h"
#include "runtime/core/dims_text.h"
#include "runtime/core/element_count.h"

namespace braid {
namespace {

thread_local bool tls_tensors_fixed = false;

}  // namespace

FixedTensorsScope::FixedTensorsScope() : previous_(tls_tensors_fixed) { tls_tensors_fixed = true; }
FixedTensorsScope::~FixedTensorsScope() { tls_tensors_fixed = previous_; }

Storage::Storage(Device device) : device_(device), allocator_(GetAllocator(device)) {}

std::shared_ptr<Storage> Storage::View(Device device, void* data, size_t bytes,
                                       std::shared_ptr<void> owner,
                                       const char* when_too_small) {
  auto s = std::shared_ptr<Storage>(new Storage(device));
  s->allocator_ = nullptr;
  s->owner_ = std::move(owner);
  s->data_ = data;
  s->capacity_ = bytes;
  s->when_too_small_ = when_too_small;
  return s;
}

Storage::~Storage() { Free(); }

void Storage::Reserve(size_t bytes) {
  if (bytes <= capacity_ && data_ != nullptr) return;
  if (is_view()) {
    std::string message = "tensor view of " + std::to_string(capacity_) + " bytes cannot hold " +
                          std::to_string(bytes) + " bytes";
    if (when_too_small_ != nullptr) message += std::string(": ") + when_too_small_;
    throw Error(Status::InvalidArgument(std::move(message)));
  }
  void* fresh = allocator_->Allocate(bytes);
  Free();
  data_ = fresh;
  capacity_ = bytes;
}

void Storage::Free() {
  if (allocator_ != nullptr && data_ != nullptr) allocator_->Free(data_, capacity_);
  data_ = nullptr;
  capacity_ = 0;
  owner_.reset();
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, Device device) : device_(device) {
  Resize(dtype, std::move(shape));
}

int64_t ChannelBlock(Layout layout) {
  switch (layout) {
    case Layout::kPlain: return 0;
    case Layout::kBlocked8:
    case Layout::kFilterBlocked8: return 8;
    case Layout::kBlocked16:
    case Layout::kFilterBlocked16: return 16;
  }
  return 0;
}

bool IsFilterLayout(Layout layout) {
  return layout == Layout::kFilterBlocked8 || layout == Layout::kFilterBlocked16;
}

Layout BlockedLayout(int64_t block) {
  if (block == 8) return Layout::kBlocked8;
  if (block == 16) return Layout::kBlocked16;
  throw Error(Status::InvalidArgument("a blocked layout has 8 or 16 channels per block, not " +
                                      std::to_string(block)));
}

Layout FilterBlockedLayout(int64_t block) {
  return BlockedLayout(block) == Layout::kBlocked8 ? Layout::kFilterBlocked8
                                                    : Layout::kFilterBlocked16;
}

bool BlockableShape(DType dtype, const std::vector<int64_t>& dims, int64_t block) {
  return block > 0 && dtype == DType::kFloat32 && dims.size() == 4 && dims[1] % block == 0;
}

bool PackableFilterShape(DType dtype, const std::vector<int64_t>& dims, int64_t block) {
  return BlockableShape(dtype, dims, block) && dims[0] % block == 0;
}

int64_t NchwOffset(Layout layout, int64_t n, int64_t c, int64_t hw, int64_t channels,
                   int64_t spatial) {
  const int64_t b = ChannelBlock(layout);
  if (b == 0) return (n * channels + c) * spatial + hw;
  return ((n * (channels / b) + c / b) * spatial + hw) * b + c % b;
}

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kPlain: return "plain";
    case Layout::kBlocked8: return "blocked8";
    case Layout::kBlocked16: return "blocked16";
    case Layout::kFilterBlocked8: return "filter_blocked8";
    case Layout::kFilterBlocked16: return "filter_blocked16";
  }
  return "?";
}

std::string Tensor::ShapeString() const {
  std::string s = DTypeName(dtype_) + DimsText(shape_);
  if (layout_ != Layout::kPlain) s += std::string(" (") + LayoutName(layout_) + ")";
  return s;
}

void Tensor::set_layout(Layout layout) {
  if (layout == layout_) return;
  const int64_t block = ChannelBlock(layout);
  if (block > 0 && !IsFilterLayout(layout) && !BlockableShape(dtype_, shape_, block)) {
    throw Error(Status::InvalidArgument(
        "tensor " + ShapeString() + " cannot be " + LayoutName(layout) +
        ": it takes float32 [N,C,H,W] with C a multiple of " + std::to_string(block)));
  }
  if (IsFilterLayout(layout) && !PackableFilterShape(dtype_, shape_, block)) {
    throw Error(Status::InvalidArgument(
        "tensor " + ShapeString() + " cannot be " + LayoutName(layout) +
        ": it takes a float32 filter [M,C,kH,kW] with M and C multiples of " +
        std::to_string(block)));
  }
  layout_ = layout;
}

void Tensor::CheckMayChange(const std::string& what) const {
  if (!tls_tensors_fixed) return;
  throw Error(Status::Internal(
      "a kernel running on " + CurrentDevice().ToString() + "'s stream would change tensor " +
      ShapeString() + " on " + device_.ToString() + " (" + what +
      "): kernels on a device run with the shapes and memory their launcher fixed from the op's "
      "shape inference, which disagrees with this kernel or cannot tell its output"));
}

void Tensor::CheckDeviceAccess() const {
  if (!CurrentDevice().is_host()) return;
  throw Error(Status::InvalidArgument("tensor " + ShapeString() + " is on " + device_.ToString() +
                                      "; host code cannot touch its memory (copy it to the host "
                                      "first)"));
}

void Tensor::Reshape(std::vector<int64_t> shape) { ReshapeFor(std::move(shape), dtype_); }

void Tensor::ReshapeFor(std::vector<int64_t> shape, DType dtype) {
  if (shape == shape_) return;
  const int64_t numel = ElementCount(shape, dtype);
  if (tls_tensors_fixed) {
    std::string dims;
    for (int64_t d : shape) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    CheckMayChange("to shape [" + dims + "]");
  }
  layout_ = Layout::kPlain;
  shape_ = std::move(shape);
  numel_ = numel;
}

void Tensor::set_dtype(DType dtype) {
  if (dtype == dtype_) return;
  CheckMayChange(std::string("to ") + DTypeName(dtype));
  if (DTypeSize(dtype) > DTypeSize(dtype_)) ElementCount(shape_, dtype);
  dtype_ = dtype;
}

void Tensor::Resize(DType dtype, std::vector<int64_t> shape) {
  ReshapeFor(std::move(shape), dtype);
  set_dtype(dtype);
}

void Tensor::CheckReadable(DType dtype) const {
  if (dtype != dtype_) {
    throw Error(Status::InvalidArgument(std::string("tensor holds ") + DTypeName(dtype_) +
                                        ", read as " + DTypeName(dtype)));
  }
  if (!has_storage() || storage_->capacity() < nbytes()) {
    throw Error(Status::InvalidArgument("tensor " + ShapeString() + " has no data"));
  }
}

void Tensor::CheckPlain() const {
  if (layout_ != Layout::kPlain) {
    throw Error(Status::InvalidArgument("tensor " + ShapeString() +
                                        " is not in the plain layout, which this reader needs"));
  }
}

const void* Tensor::raw_data() const {
  CheckReadable(dtype_);
  CheckPlain();
  CheckAccessible();
  return storage_->data();
}

void* Tensor::raw_mutable_data(DType dtype) {
  CheckAccessible();
  set_dtype(dtype);
  if (layout_ != Layout::kPlain) layout_ = Layout::kPlain;
  ReserveStorage();
  return storage_->data();
}

void Tensor::ReserveStorage() {
  const size_t bytes = std::max<size_t>(nbytes(), 1);
  if (storage_ && storage_->data() != nullptr && storage_->capacity() >= bytes) return;
  CheckMayChange("to " + std::to_string(bytes) + " bytes of storage");
  if (!storage_) storage_ = std::make_shared<Storage>(device_);
  storage_->Reserve(bytes);
}

void Tensor::ShareData(const Tensor& other) {
  CheckMayChange("to share another tensor's storage");
  storage_ = other.storage_;
  shape_ = other.shape_;
  numel_ = other.numel_;
  dtype_ = other.dtype_;
  layout_ = other.layout_;
  device_ = other.device_;
}

void Tensor::SetExternalStorage(void* data, size_t bytes, std::shared_ptr<void> owner,
                                const char* when_too_small) {
  CheckMayChange("to external storage");
  storage_ = Storage::View(device_, data, bytes, std::move(owner), when_too_small);
}

void Tensor::FreeMemory() {
  CheckMayChange("to no storage");
  storage_.reset();
}

void Tensor::CopyFrom(const Tensor& other) {
  if (this == &other) return;
  Resize(other.dtype_, other.shape_);
  ReserveStorage();
  layout_ = Layout::kPlain;
  if (other.numel() == 0) return;
  other.CheckReadable(other.dtype_);
  CopyBetweenDevices(storage_->data(), device_, other.storage_->data(), other.device_, nbytes());
  layout_ = other.layout_;
}

}  // namespace braid
