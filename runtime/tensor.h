// Tensor: a typed, shaped view onto Storage.
//
// Storage is a block of device memory with a capacity. It is either owned (from the device's
// Allocator) or a view onto memory someone else owns (the memory planner's arena). Rules:
//   - Reshape never allocates: it only changes the shape. Reading or writing a tensor whose
//     shape needs more than the capacity is an error for views, and grows owned storage.
//   - Owned storage only grows. It is released by FreeMemory() or when the last tensor sharing it
//     goes away, never implicitly on a smaller shape.
//   - ShareData makes two tensors use one Storage; writes through one are seen by the other.
//
//   Tensor t(DType::kFloat32, {2, 3});
//   float* p = t.mutable_data<float>();   // allocates 24 bytes on first use
//   t.Reshape({3, 2});                    // same memory, no allocation
//
// Thread safety: a Tensor is not synchronised. Within a net run the executor orders every writer
// of a blob before its readers (planner/dataflow.h), which is what makes tensors safe to use there.
#ifndef BRAID_RUNTIME_TENSOR_H_
#define BRAID_RUNTIME_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/dtype.h"

namespace braid {

class Storage {
 public:
  // Empty owned storage on `device`; memory comes on the first Reserve.
  explicit Storage(Device device);
  // A view onto `bytes` bytes at `data`, owned elsewhere. `owner`, when given, is kept alive as long
  // as the view (an arena shared by many views); otherwise the memory must outlive this Storage.
  static std::shared_ptr<Storage> View(Device device, void* data, size_t bytes,
                                       std::shared_ptr<void> owner = nullptr);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Makes capacity() >= bytes. Owned storage reallocates (old contents are not kept);
  // a view that is too small throws braid::Error.
  void Reserve(size_t bytes);
  // Releases owned memory (capacity becomes 0); a view forgets its memory.
  void Free();

  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  bool is_view() const { return allocator_ == nullptr; }
  const Device& device() const { return device_; }
  // Changes on every Tensor::raw_mutable_data of a tensor on this storage (every write goes
  // through it); values are unique in the process, so (storage, version) names one content.
  // Written by the op writing the tensor, read by ops the executor orders after it.
  uint64_t version() const { return version_; }
  void MarkWritten();

 private:
  Device device_;
  Allocator* allocator_ = nullptr;  // null for views
  std::shared_ptr<void> owner_;     // views only: keeps the viewed memory alive
  void* data_ = nullptr;
  size_t capacity_ = 0;
  uint64_t version_;
};

class Tensor {
 public:
  explicit Tensor(Device device = Device{}) : device_(device) {}
  Tensor(DType dtype, std::vector<int64_t> shape, Device device = Device{});

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_.at(i); }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return numel_; }  // cached: kernels may call it in loop conditions
  size_t nbytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype_); }
  const Device& device() const { return device_; }
  // Bytes available without allocating (0 before the first write).
  size_t capacity() const { return storage_ ? storage_->capacity() : 0; }
  bool has_storage() const { return storage_ != nullptr && storage_->data() != nullptr; }
  std::string ShapeString() const;  // "float32[2,3]"

  // Changes shape only; throws braid::Error for negative dims.
  void Reshape(std::vector<int64_t> shape);
  // Sets the element type (shape unchanged); never allocates.
  void set_dtype(DType dtype) { dtype_ = dtype; }
  // Reshape and set_dtype together.
  void Resize(DType dtype, std::vector<int64_t> shape);

  // Read access. Throws braid::Error if T is not the dtype or the data was never written.
  template <typename T> const T* data() const {
    CheckReadable(DTypeOf<T>());
    return static_cast<const T*>(storage_->data());
  }
  const void* raw_data() const;
  // Write access: sets the dtype to T and makes capacity fit the shape (see the class comment).
  template <typename T> T* mutable_data() { return static_cast<T*>(raw_mutable_data(DTypeOf<T>())); }
  void* raw_mutable_data(DType dtype);

  // Uses other's storage (and its shape and dtype) from now on.
  void ShareData(const Tensor& other);
  // Makes this tensor a view onto external memory of `bytes` bytes (kept alive by `owner` if given).
  void SetExternalStorage(void* data, size_t bytes, std::shared_ptr<void> owner = nullptr);
  // Drops the storage; the next write allocates again.
  void FreeMemory();
  // Copies shape, dtype and bytes from other (host tensors only for now).
  void CopyFrom(const Tensor& other);

  const std::shared_ptr<Storage>& storage() const { return storage_; }

 private:
  void CheckReadable(DType dtype) const;

  Device device_;
  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 1;  // product of shape_, kept in step by every shape change
  std::shared_ptr<Storage> storage_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_TENSOR_H_
