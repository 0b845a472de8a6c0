// Devices: a device type and an index, as named by a DeviceOption {device_type, device_id}.
//
//   Device d = DeviceFromProto(op.device_option());   // {DeviceType::kCpu, 0}
//   d.ToString();                                     // "cpu:0"
//   ParseDevice("sim:1");                             // {DeviceType::kSim, 1}
//
// Three device types. `cpu` runs kernels on the calling thread; its devices (cpu:0, cpu:1, ...)
// are logical devices over one host memory. `cuda` is an NVIDIA GPU. `sim` is braid's simulated
// GPU (runtime/device/sim/sim_device.h): asynchronous streams and memory of its own, on the CPU.
// Its device_type number, 1000, is braid's own: Caffe2 numbers its types 0 (CPU) to 10 (MPS) and
// 20901 (tests), so a Caffe2 net never names it by accident.
//
// Thread safety: Device is a value; every function here is pure.
#ifndef BRAID_RUNTIME_CORE_DEVICE_H_
#define BRAID_RUNTIME_CORE_DEVICE_H_

#include <string>

#include "proto/braid.pb.h"

namespace braid {

// Numbered as DeviceTypeProto (Caffe2's PROTO_CPU and PROTO_CUDA; braid's PROTO_BRAID_SIM).
enum class DeviceType { kCpu = 0, kCuda = 1, kSim = 1000 };

struct Device {
  DeviceType type = DeviceType::kCpu;
  int id = 0;

  std::string ToString() const;  // "cpu:0", "cuda:1", "sim:0"
  // Whether the device's memory is host memory (every cpu:N shares it).
  bool is_host() const { return type == DeviceType::kCpu; }
  bool operator==(const Device&) const = default;
};

// Whether a kernel on `runner` may touch memory on `memory`: the same device, or host memory
// from a host kernel.
inline bool SameMemory(const Device& runner, const Device& memory) {
  return runner == memory || (runner.is_host() && memory.is_host());
}

const char* DeviceTypeName(DeviceType type);  // "cpu", "cuda", "sim"
// Throws braid::Error for a device type braid does not know.
Device DeviceFromProto(const DeviceOption& option);
DeviceOption DeviceToProto(const Device& device);
// "cpu:0", "sim:1", "cuda:0"; throws braid::Error naming the text otherwise.
Device ParseDevice(const std::string& text);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_DEVICE_H_
