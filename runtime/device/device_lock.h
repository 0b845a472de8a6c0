// DeviceLock: the per-device mutex that a collective's launch and the device's raw memory calls
// share.
//
// A raw allocation or free drains its device (cudaMalloc and cudaFree synchronise it; so does sim's
// RawAllocate, runtime/device/sim/sim_device.h) and holds the driver's lock while it waits, and
// every kernel launch needs that lock. A collective launches one kernel per device, one device
// after another, and each kernel blocks its stream until its peers arrive. A raw call that falls
// between two of those launches therefore waits for a kernel that waits for a launch that waits for
// the raw call: a deadlock. Holding the locks of every participating device across the whole group
// launch, and the device's lock across each raw call, makes the two exclude each other (Caffe2
// guarded its NCCL launches and cudaMalloc with one mutex for the same reason).
//
//   DevicesLock group({sim0, sim1});   // a collective's launch
//   std::unique_lock<std::mutex> raw = LockDevice(sim0);   // CachingAllocator's raw calls
//
// A lock belongs to a physical device (runtime/core/device_context.h PhysicalDevice): logical
// devices on one card share it, since a raw call on one drains them all (cudaMalloc synchronises
// the GPU).
//
// Lock order: a thread holding device locks takes no allocator lock (launchers size a collective's
// outputs before taking them, and collectives make what they allocate in
// CollectiveOp::PrepareRanks, runtime/device/collective.h); physical devices are locked in
// ascending (type, id) order, each once however many of its logical devices are named.
// SetCollectiveAllocationExclusion(false) turns every lock into a no-op: tests use it to show the
// deadlock the locks prevent. Thread safety: all functions may be called from any thread.
#ifndef BRAID_RUNTIME_DEVICE_DEVICE_LOCK_H_
#define BRAID_RUNTIME_DEVICE_DEVICE_LOCK_H_

#include <mutex>
#include <vector>

#include "runtime/core/device.h"

namespace braid {

// The lock of `device`'s physical device, held (an empty lock while exclusion is off).
std::unique_lock<std::mutex> LockDevice(const Device& device);

// The locks of several devices' physical devices, taken in ascending order and held while it
// lives.
class DevicesLock {
 public:
  explicit DevicesLock(std::vector<Device> devices);
  DevicesLock(const DevicesLock&) = delete;
  DevicesLock& operator=(const DevicesLock&) = delete;

 private:
  std::vector<std::unique_lock<std::mutex>> locks_;
};

// On by default. Set it only while no collective launch or raw call is in flight.
void SetCollectiveAllocationExclusion(bool on);
bool CollectiveAllocationExclusion();

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_DEVICE_LOCK_H_
