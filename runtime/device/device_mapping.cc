#include "runtime/device/device_mapping.h"

#include <cstdlib>

namespace braid {

Status ParseDeviceMapping(const std::string& variable, const std::string& text, int physical_count,
                          std::vector<int>* ids) {
  const std::string context = variable + "='" + text + "'";
  std::vector<int> parsed;
  size_t begin = 0;
  for (;;) {
    const size_t comma = text.find(',', begin);
    const std::string item =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    const bool digits = !item.empty() && item.size() <= 6 &&
                        item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) {
      return Status::InvalidArgument(context + " is not a comma list of physical device ids "
                                     "(e.g. 0,0 for two logical devices on device 0)");
    }
    const int id = std::atoi(item.c_str());
    if (id >= physical_count) {
      const std::string has =
          physical_count == 0 ? "none"
                              : std::to_string(physical_count) + " (ids 0 to " +
                                    std::to_string(physical_count - 1) + ")";
      return Status::InvalidArgument(context + " names physical device " + item +
                                     ", but this machine has " + has);
    }
    parsed.push_back(id);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  *ids = std::move(parsed);
  return Status::OK();
}

Status DeviceMappingFromEnvironment(const char* variable, int physical_count,
                                    std::vector<int>* ids) {
  ids->clear();
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return Status::OK();
  return ParseDeviceMapping(variable, text, physical_count, ids);
}

}  // namespace braid
