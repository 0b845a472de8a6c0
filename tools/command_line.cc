#include "tools/command_line.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "runtime/status.h"

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
  return std::vector<std::string>(parsed_argv + 1, parsed_argv + parsed_argc);
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
