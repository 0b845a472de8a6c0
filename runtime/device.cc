#include "runtime/device.h"

#include "runtime/status.h"

namespace braid {

const char* DeviceTypeName(DeviceType type) {
  return type == DeviceType::kCuda ? "cuda" : "cpu";
}

std::string Device::ToString() const {
  return std::string(DeviceTypeName(type)) + ":" + std::to_string(id);
}

Device DeviceFromProto(const DeviceOption& option) {
  if (option.device_type() < 0 || option.device_type() >= kNumDeviceTypes) {
    throw Error(Status::InvalidArgument("unknown device_type " +
                                        std::to_string(option.device_type()) +
                                        " (braid knows 0 = cpu, 1 = cuda)"));
  }
  return Device{static_cast<DeviceType>(option.device_type()), option.device_id()};
}

}  // namespace braid
