// TakeRepeatedFlag: a flag given several times on a command line, before gflags parses the rest.
//
// gflags keeps only the last value of a flag given twice; TakeRepeatedFlag collects every value of
// `name` ("--name VALUE" or "--name=VALUE", with dashes or underscores in the name, one or two
// leading dashes) in order and removes those arguments from *args, so that ParseCommandLine
// (tools/command_line.h) sees the rest. Arguments after "--" are left alone.
//
//   std::vector<std::string> args(argv, argv + argc), inputs;
//   std::string error;
//   if (!TakeRepeatedFlag("input", &args, &inputs, &error)) ExitBadFlags(error);
//
// Pure function; thread-safe.
#ifndef BRAID_TOOLS_REPEATED_FLAG_H_
#define BRAID_TOOLS_REPEATED_FLAG_H_

#include <string>
#include <vector>

namespace braid {

// `name` uses underscores. Returns false, with *error set, when the flag's last use lacks a value.
bool TakeRepeatedFlag(const std::string& name, std::vector<std::string>* args,
                      std::vector<std::string>* values, std::string* error);

}  // namespace braid

#endif  // BRAID_TOOLS_REPEATED_FLAG_H_
