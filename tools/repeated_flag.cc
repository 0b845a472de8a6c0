#include "tools/repeated_flag.h"

#include <algorithm>

namespace braid {
namespace {

// "--gradients-of=loss" -> "gradients_of"; "" when `arg` is not a flag.
std::string FlagName(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-') return "";
  const size_t begin = arg[1] == '-' ? 2 : 1;
  std::string name = arg.substr(
      begin, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - begin);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace

bool TakeRepeatedFlag(const std::string& name, std::vector<std::string>* args,
                      std::vector<std::string>* values, std::string* error) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < args->size(); ++i) {
    const std::string& arg = (*args)[i];
    if (arg == "--") {
      rest.insert(rest.end(), args->begin() + static_cast<std::ptrdiff_t>(i), args->end());
      break;
    }
    if (i == 0 || FlagName(arg) != name) {
      rest.push_back(arg);
      continue;
    }
    const size_t equals = arg.find('=');
    if (equals != std::string::npos) {
      values->push_back(arg.substr(equals + 1));
    } else if (i + 1 < args->size()) {
      values->push_back((*args)[++i]);
    } else {
      *error = "flag --" + name + " is missing its value";
      return false;
    }
  }
  *args = std::move(rest);
  return true;
}

}  // namespace braid
