#include "runtime/core/device.h"

#include <cstdlib>

#include "braid/status.h"

namespace braid {

const char* DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::kCpu:
      return "cpu";
    case DeviceType::kCuda:
      return "cuda";
    case DeviceType::kSim:
      return "sim";
  }
  return "?";
}

std::string Device::ToString() const {
  return std::string(DeviceTypeName(type)) + ":" + std::to_string(id);
}

Device DeviceFromProto(const DeviceOption& option) {
  const int type = option.device_type();
  if (type != static_cast<int>(DeviceType::kCpu) && type != static_cast<int>(DeviceType::kCuda) &&
      type != static_cast<int>(DeviceType::kSim)) {
    throw Error(Status::InvalidArgument("unknown device_type " + std::to_string(type) +
                                        " (braid knows 0 = cpu, 1 = cuda, 1000 = sim)"));
  }
  if (option.device_id() < 0) {
    throw Error(Status::InvalidArgument("negative device_id " +
                                        std::to_string(option.device_id())));
  }
  return Device{static_cast<DeviceType>(type), option.device_id()};
}

DeviceOption DeviceToProto(const Device& device) {
  DeviceOption option;
  option.set_device_type(static_cast<int>(device.type));
  option.set_device_id(device.id);
  return option;
}

Device ParseDevice(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string type = text.substr(0, colon);
  const std::string id = colon == std::string::npos ? "" : text.substr(colon + 1);
  char* end = nullptr;
  const long number = id.empty() ? -1 : std::strtol(id.c_str(), &end, 10);
  Device device;
  if (type == "cpu") {
    device.type = DeviceType::kCpu;
  } else if (type == "cuda") {
    device.type = DeviceType::kCuda;
  } else if (type == "sim") {
    device.type = DeviceType::kSim;
  } else {
    throw Error(Status::InvalidArgument("'" + text + "' is not a device (cpu:N, sim:N, cuda:N)"));
  }
  if (number < 0 || *end != '\0' || number > 1 << 16) {
    throw Error(Status::InvalidArgument("'" + text + "' is not a device (cpu:N, sim:N, cuda:N)"));
  }
  device.id = static_cast<int>(number);
  return device;
}

}  // namespace braid
