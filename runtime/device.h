// Devices: a device type and an index, as named by a DeviceOption {device_type, device_id}.
//
//   Device d = DeviceFromProto(op.device_option());   // {DeviceType::kCpu, 0}
//   d.ToString();                                     // "cpu:0"
#ifndef BRAID_RUNTIME_DEVICE_H_
#define BRAID_RUNTIME_DEVICE_H_

#include <string>

#include "proto/braid.pb.h"

namespace braid {

// Numbered as DeviceTypeProto (and Caffe2's PROTO_CPU, PROTO_CUDA).
enum class DeviceType { kCpu = 0, kCuda = 1 };
constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::kCpu;
  int id = 0;

  std::string ToString() const;
  bool operator==(const Device&) const = default;
};

const char* DeviceTypeName(DeviceType type);
// Throws braid::Error for a device type braid does not know.
Device DeviceFromProto(const DeviceOption& option);

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_H_
