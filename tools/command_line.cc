#include "tools/command_line.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "braid/status.h"
#include "runtime/core/device_context.h"
#include "runtime/device/sim/sim_device.h"

DEFINE_string(device_memory, "16G",
              "capacity of each simulated GPU (sim:N devices): 16G, 512M, 64K or bytes");

// gflags ends the process through this pointer on a bad flag (with status 1). It is exported by
// libgflags but not declared in its headers.
namespace google {
extern void (*gflags_exitfunc)(int);
}  // namespace google

namespace braid {
namespace {

// "--batch-size=64" -> "--batch_size=64": gflags only knows underscores.
std::vector<std::string> UnderscoreFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& arg : args) {
    if (arg.rfind("--", 0) != 0) continue;
    const size_t end = std::min(arg.find('='), arg.size());
    std::replace(arg.begin() + 2, arg.begin() + static_cast<std::ptrdiff_t>(end), '-', '_');
  }
  return args;
}

}  // namespace

std::vector<std::string> ParseCommandLine(int argc, char** argv, const std::string& usage) {
  gflags::SetUsageMessage(usage);
  google::gflags_exitfunc = [](int code) { std::exit(code == 0 ? 0 : kExitBadFlags); };
  // gflags keeps pointers into argv for the program's life: the strings must outlive this call.
  static std::vector<std::string> args;
  args = UnderscoreFlagNames(argc, argv);
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  int parsed_argc = static_cast<int>(pointers.size());
  char** parsed_argv = pointers.data();
  gflags::ParseCommandLineFlags(&parsed_argc, &parsed_argv, /*remove_flags=*/true);
  SimDeviceOptions sim = GetSimDeviceOptions();
  const Status capacity = StatusFromCall([&] {
    sim.capacity_bytes = ParseByteSize(FLAGS_device_memory, "--device-memory");
    SetSimDeviceOptions(sim);
  });
  if (!capacity.ok()) {
    std::cerr << capacity.message() << "\n";
    std::exit(kExitBadFlags);
  }
  return std::vector<std::string>(parsed_argv + 1, parsed_argv + parsed_argc);
}

int64_t ParseByteSize(const std::string& text, const std::string& flag) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  int shift = 0;
  const std::string unit = end == nullptr ? "" : std::string(end);
  if (unit == "K" || unit == "k") shift = 10;
  if (unit == "M" || unit == "m") shift = 20;
  if (unit == "G" || unit == "g") shift = 30;
  if (unit == "T" || unit == "t") shift = 40;
  if (end == text.c_str() || !(value > 0) || (shift == 0 && !unit.empty())) {
    throw Error(Status::InvalidArgument(flag + " '" + text +
                                        "' is not a size (16G, 512M, 64K or a number of bytes)"));
  }
  return static_cast<int64_t>(value * static_cast<double>(int64_t{1} << shift));
}

int64_t ParseBudget(const std::string& text, const std::string& flag) {
  if (text.empty() || text == "0") return 0;
  return ParseByteSize(text, flag);
}

std::vector<int64_t> ParseIntList(const std::string& text, const std::string& flag) {
  std::vector<int64_t> values;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value < 0 || errno == ERANGE) {
      throw Error(Status::InvalidArgument(flag + " '" + text +
                                          "' is not a list of integers >= 0 (1000,2000)"));
    }
    values.push_back(value);
  }
  return values;
}

std::vector<Device> ParseDeviceList(const std::string& list, const std::string& tool,
                                    const std::string& flag) {
  auto bad = [&](const std::string& why) {
    throw Error(Status::InvalidArgument(tool + ": " + flag + " " + why));
  };
  std::vector<Device> devices;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');) {
    Device device;
    const Status parsed = StatusFromCall([&] { device = ParseDevice(item); });
    if (!parsed.ok()) bad(parsed.message());
    if (device.type == DeviceType::kCuda) {
      // Refused here, before anything is built, with CUDA's error where the GPU is missing.
      const Status usable = StatusFromCall([&] { GetDeviceContext(device); });
      if (!usable.ok()) bad(usable.message());
    }
    if (!devices.empty() && device.type != devices[0].type) {
      bad("mixes " + devices[0].ToString() + " and " + device.ToString() +
          ": list devices of one type");
    }
    if (std::find(devices.begin(), devices.end(), device) != devices.end()) {
      bad("lists " + device.ToString() + " twice");
    }
    devices.push_back(device);
  }
  if (devices.empty()) bad("lists no device");
  return devices;
}

int RunTool(const std::string& tool, const std::function<void()>& body) {
  const Status status = StatusFromCall(body);
  std::cout.flush();
  if (status.ok()) return 0;
  std::string text = status.ToString();
  for (size_t pos; (pos = text.find('\n')) != std::string::npos;) text.replace(pos, 1, "; ");
  std::cerr << text << "\n";
  const bool bad_flag =
      status.code() == StatusCode::kInvalidArgument && status.message().rfind(tool + ":", 0) == 0;
  return bad_flag ? kExitBadFlags : 1;
}

}  // namespace braid
