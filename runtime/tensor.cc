#include "runtime/tensor.h"

#include <algorithm>
#include <cstring>

#include <glog/logging.h>

#include "runtime/status.h"

namespace braid {

Storage::Storage(Device device) : device_(device), allocator_(GetAllocator(device.type)) {}

std::shared_ptr<Storage> Storage::View(Device device, void* data, size_t bytes,
                                       std::shared_ptr<void> owner) {
  auto s = std::shared_ptr<Storage>(new Storage(device));
  s->allocator_ = nullptr;
  s->owner_ = std::move(owner);
  s->data_ = data;
  s->capacity_ = bytes;
  return s;
}

Storage::~Storage() { Free(); }

void Storage::Reserve(size_t bytes) {
  if (bytes <= capacity_ && data_ != nullptr) return;
  if (is_view()) {
    throw Error(Status::InvalidArgument("tensor view of " + std::to_string(capacity_) +
                                        " bytes cannot hold " + std::to_string(bytes) + " bytes"));
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

bool BlockableShape(DType dtype, const std::vector<int64_t>& dims) {
  return dtype == DType::kFloat32 && dims.size() == 4 && dims[1] % kLayoutBlock == 0;
}

const char* LayoutName(Layout layout) {
  return layout == Layout::kPlain ? "plain" : "blocked16";
}

std::string Tensor::ShapeString() const {
  std::string s = std::string(DTypeName(dtype_)) + "[";
  for (size_t i = 0; i < shape_.size(); ++i) s += (i ? "," : "") + std::to_string(shape_[i]);
  s += "]";
  if (layout_ != Layout::kPlain) s += std::string(" (") + LayoutName(layout_) + ")";
  return s;
}

void Tensor::set_layout(Layout layout) {
  if (layout != Layout::kPlain && !BlockableShape(dtype_, shape_)) {
    throw Error(Status::InvalidArgument("tensor " + ShapeString() + " cannot be " +
                                        LayoutName(layout) +
                                        ": it takes float32 [N,C,H,W] with C a multiple of 16"));
  }
  layout_ = layout;
}

void Tensor::Reshape(std::vector<int64_t> shape) {
  for (int64_t d : shape) {
    if (d < 0) throw Error(Status::InvalidArgument("negative dimension in shape"));
  }
  if (shape != shape_) layout_ = Layout::kPlain;
  shape_ = std::move(shape);
  numel_ = 1;
  for (int64_t d : shape_) numel_ *= d;
}

void Tensor::Resize(DType dtype, std::vector<int64_t> shape) {
  Reshape(std::move(shape));
  dtype_ = dtype;
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
  return storage_->data();
}

void* Tensor::raw_mutable_data(DType dtype) {
  dtype_ = dtype;
  layout_ = Layout::kPlain;
  if (!storage_) storage_ = std::make_shared<Storage>(device_);
  storage_->Reserve(std::max<size_t>(nbytes(), 1));
  return storage_->data();
}

void Tensor::ShareData(const Tensor& other) {
  storage_ = other.storage_;
  shape_ = other.shape_;
  numel_ = other.numel_;
  dtype_ = other.dtype_;
  layout_ = other.layout_;
  device_ = other.device_;
}

void Tensor::SetExternalStorage(void* data, size_t bytes, std::shared_ptr<void> owner) {
  storage_ = Storage::View(device_, data, bytes, std::move(owner));
}

void Tensor::FreeMemory() { storage_.reset(); }

void Tensor::CopyFrom(const Tensor& other) {
  if (this == &other) return;
  CHECK(device_.type == DeviceType::kCpu && other.device_.type == DeviceType::kCpu)
      << "Tensor::CopyFrom supports host tensors only";
  Resize(other.dtype_, other.shape_);
  if (other.numel() == 0) {
    raw_mutable_data(dtype_);
    return;
  }
  other.CheckReadable(other.dtype_);
  std::memcpy(raw_mutable_data(dtype_), other.storage_->data(), nbytes());
  layout_ = other.layout_;
}

}  // namespace braid
