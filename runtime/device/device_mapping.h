// Device mappings: several logical devices on one physical device.
//
// A mapping lists, for logical devices 0, 1, ..., the physical device each runs on, as a comma
// list of physical ids in an environment variable: BRAID_CUDA_DEVICES=0,0 makes cuda:0 and cuda:1
// two logical GPUs of physical GPU 0 (runtime/device/cuda/cuda_device.h), BRAID_SIM_DEVICES=0,0 the
// same for sim (runtime/device/sim/sim_device.h). Each logical device keeps its own streams,
// caching allocator and replicas; what a physical device has once (its memory, the drain of a raw
// allocation, the device lock of runtime/device/device_lock.h) its logical devices share.
// PhysicalDevice (runtime/core/device_context.h) answers which physical device a logical one runs
// on.
//
//   std::vector<int> ids;
//   Status s = ParseDeviceMapping("BRAID_CUDA_DEVICES", "0,0", /*physical_count=*/1, &ids);
//   // ids == {0, 0}; "0,1" on a one-GPU machine is InvalidArgument naming BRAID_CUDA_DEVICES
//
// Thread safety: pure functions.
#ifndef BRAID_RUNTIME_DEVICE_DEVICE_MAPPING_H_
#define BRAID_RUNTIME_DEVICE_DEVICE_MAPPING_H_

#include <string>
#include <vector>

#include "braid/status.h"

namespace braid {

// Parses `text`, the value of environment variable `variable`: one or more decimal ids in
// [0, physical_count) separated by commas, no blanks. On success *ids[i] is logical device i's
// physical id. A malformed list, or an id the machine does not have, is InvalidArgument naming
// the variable, its value and the machine's count.
Status ParseDeviceMapping(const std::string& variable, const std::string& text, int physical_count,
                          std::vector<int>* ids);

// The mapping environment variable `variable` holds, parsed as above, into *ids; an unset or
// empty variable leaves *ids empty (the identity: each logical device its own physical one).
Status DeviceMappingFromEnvironment(const char* variable, int physical_count,
                                    std::vector<int>* ids);

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_DEVICE_MAPPING_H_
