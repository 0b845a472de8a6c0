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
// Layouts. A tensor's elements are row-major over its shape (Layout::kPlain) unless its writer
// set a blocked layout: Layout::kBlocked8 / kBlocked16 is an NCHW float32 tensor with C a multiple
// of the block b stored as [N][C/b][H][W][b] (oneDNN's nChw8c / nChw16c), the same bytes in another
// order, which oneDNN's kernels read and write without a reorder. The block is the machine's:
// oneDNN's convolutions work on 8-channel blocks on AVX2 and 16-channel ones on AVX-512, and a net
// is built with the block its ops' kernels ask for (OpSchema::LayoutPorts::channel_block). Every
// write (raw_mutable_data) and every change of shape resets the layout to kPlain; a writer that
// writes the blocked order sets it afterwards. data() and raw_data() read plain tensors only (a
// blocked tensor is an error); ops that handle both layouts read through any_layout_data() and look
// at layout(). Which blobs of a net are blocked is decided when the net is built
// (runtime/models/blocked_layouts.h, OpSchema::BlockedPorts), and a net whose op would read one of
// its blocked blobs plain is refused then (runtime/exec/net_validation.h): that also covers ops
// running in place, whose write resets the layout before they read. (A blocked tensor made outside
// the net and given to such an op in place is not caught.) Layout::kFilterBlocked8 /
// kFilterBlocked16 is a convolution filter [M, C, kH, kW] (float32, M and C multiples of b) stored
// as [M/b][C/b][kH][kW][b c][b m] (oneDNN's OIhw8i8o / OIhw16i16o), the order its direct
// convolution reads on AVX2 / AVX-512: an inference net's constant filters are packed so once, when
// it is loaded (runtime/models/pack_parameters.h), instead of being reordered on every run.
//
// Devices. A tensor lives on a device (runtime/core/device.h) and its storage comes from that
// device's allocator. Host code (any thread not running a kernel of a non-host device, see
// runtime/core/device_context.h CurrentDevice) may not read or write the data of a tensor on a sim
// or cuda device: data() and mutable_data() throw naming both devices. CopyFrom copies between any
// two devices from the host.
//
// Kernels queued on a device stream run after their launcher fixed their tensors' shapes, types
// and storage (runtime/exec/launch_plan.h); while a FixedTensorsScope lives on a thread (a sim
// stream's thread), a change of shape, type or storage throws instead of racing with the host.
// Setting a value a tensor already has is no change: every setter writes only what differs.
//
// Thread safety: a Tensor is not synchronised. Within a net run the executor orders every writer
// of a blob before its readers (planner/dataflow.h), which is what makes tensors safe to use there.
#ifndef BRAID_RUNTIME_CORE_TENSOR_H_
#define BRAID_RUNTIME_CORE_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braid/dtype.h"
#include "runtime/core/allocator.h"
#include "runtime/core/device.h"

namespace braid {

enum class Layout : uint8_t { kPlain, kBlocked8, kBlocked16, kFilterBlocked8, kFilterBlocked16 };
// Channels per block of a blocked layout (8 or 16; of both channel dims for a filter); 0 for
// kPlain.
int64_t ChannelBlock(Layout layout);
// Whether `layout` is one of the filter layouts (kFilterBlocked8, kFilterBlocked16).
bool IsFilterLayout(Layout layout);
// The activation / filter layout with `block` channels per block; throws braid::Error unless
// `block` is 8 or 16.
Layout BlockedLayout(int64_t block);
Layout FilterBlockedLayout(int64_t block);
// Whether a tensor of `dims` and `dtype` can be blocked by `block` (8 or 16): float32, 4-D,
// channels a multiple of the block.
bool BlockableShape(DType dtype, const std::vector<int64_t>& dims, int64_t block);
// Whether it can be a filter blocked by `block`: float32, 4-D, dims 0 and 1 multiples of it.
bool PackableFilterShape(DType dtype, const std::vector<int64_t>& dims, int64_t block);
// "plain", "blocked8", "blocked16", "filter_blocked8", "filter_blocked16".
const char* LayoutName(Layout layout);
// The element offset of (n, c, hw) in an NCHW tensor of `channels` channels and `spatial` pixels
// per channel stored in activation layout `layout` (plain, kBlocked8 or kBlocked16).
int64_t NchwOffset(Layout layout, int64_t n, int64_t c, int64_t hw, int64_t channels,
                   int64_t spatial);

class Storage {
 public:
  // Empty owned storage on `device`; memory comes on the first Reserve.
  explicit Storage(Device device);
  // A view onto `bytes` bytes at `data`, owned elsewhere. `owner`, when given, is kept alive as
  // long as the view (an arena shared by many views); otherwise the memory must outlive this
  // Storage. `when_too_small` (a literal), when given, ends the error of a Reserve the view cannot
  // hold: what the caller should do (a memory plan's view says to plan again).
  static std::shared_ptr<Storage> View(Device device, void* data, size_t bytes,
                                       std::shared_ptr<void> owner = nullptr,
                                       const char* when_too_small = nullptr);
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

 private:
  Device device_;
  Allocator* allocator_ = nullptr;  // null for views
  std::shared_ptr<void> owner_;     // views only: keeps the viewed memory alive
  void* data_ = nullptr;
  size_t capacity_ = 0;
  const char* when_too_small_ = nullptr;  // views only: see View
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
  std::string ShapeString() const;  // "float32[2,3]", "float32[8,64,7,7] (blocked16)"
  Layout layout() const { return layout_; }
  // Marks the data, already written, as being in `layout`; throws braid::Error for kBlocked16
  // unless BlockableShape.
  void set_layout(Layout layout);

  // Changes shape only; throws braid::Error for negative dims, or an element count or byte size
  // that overflows int64 (runtime/core/element_count.h).
  void Reshape(std::vector<int64_t> shape);
  // Sets the element type (shape unchanged); never allocates. Throws as Reshape for a byte size
  // that overflows int64.
  void set_dtype(DType dtype);
  // Reshape and set_dtype together.
  void Resize(DType dtype, std::vector<int64_t> shape);

  // Read access. Throws braid::Error if T is not the dtype, the data was never written, the
  // tensor is not kPlain, or the caller is host code and the tensor is on another device.
  template <typename T> const T* data() const {
    CheckReadable(DTypeOf<T>());
    CheckPlain();
    CheckAccessible();
    return static_cast<const T*>(storage_->data());
  }
  const void* raw_data() const;
  // As data(), in whatever layout() the tensor has.
  template <typename T> const T* any_layout_data() const {
    CheckReadable(DTypeOf<T>());
    CheckAccessible();
    return static_cast<const T*>(storage_->data());
  }
  // Write access: sets the dtype to T, the layout to kPlain and makes capacity fit the shape.
  // Throws braid::Error if the caller is host code and the tensor is on another device.
  template <typename T> T* mutable_data() { return static_cast<T*>(raw_mutable_data(DTypeOf<T>())); }
  void* raw_mutable_data(DType dtype);
  // Makes capacity fit the shape without touching the data or the layout (a launcher preparing a
  // kernel's output on the host).
  void ReserveStorage();

  // Uses other's storage (and its shape, dtype and layout) from now on.
  void ShareData(const Tensor& other);
  // Makes this tensor a view onto external memory of `bytes` bytes (kept alive by `owner` if given;
  // `when_too_small` as in Storage::View).
  void SetExternalStorage(void* data, size_t bytes, std::shared_ptr<void> owner = nullptr,
                          const char* when_too_small = nullptr);
  // Drops the storage; the next write allocates again.
  void FreeMemory();
  // Copies shape, dtype, layout and bytes from other, on any device, from the host, after the
  // devices' work queued so far (runtime/core/device_context.h CopyBetweenDevices).
  void CopyFrom(const Tensor& other);

  const std::shared_ptr<Storage>& storage() const { return storage_; }

 private:
  // Reshape, with the byte size checked for `dtype` (the type the tensor is about to hold).
  void ReshapeFor(std::vector<int64_t> shape, DType dtype);
  void CheckReadable(DType dtype) const;
  void CheckPlain() const;
  // Throws unless the calling thread may touch this tensor's memory.
  void CheckAccessible() const {
    if (!device_.is_host()) CheckDeviceAccess();
  }
  void CheckDeviceAccess() const;
  // Throws if a FixedTensorsScope forbids changing this tensor (`what` says how it would change).
  void CheckMayChange(const std::string& what) const;

  Device device_;
  DType dtype_ = DType::kFloat32;
  Layout layout_ = Layout::kPlain;
  std::vector<int64_t> shape_;
  int64_t numel_ = 1;  // product of shape_, kept in step by every shape change
  std::shared_ptr<Storage> storage_;
};

// While it lives, no tensor's shape, type or storage may change on the calling thread: the thread
// serves a device stream whose kernels run with what their launcher fixed (see the file comment).
class FixedTensorsScope {
 public:
  FixedTensorsScope();
  ~FixedTensorsScope();
  FixedTensorsScope(const FixedTensorsScope&) = delete;
  FixedTensorsScope& operator=(const FixedTensorsScope&) = delete;

 private:
  bool previous_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_TENSOR_H_
