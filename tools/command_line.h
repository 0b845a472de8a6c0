// Command-line conventions shared by braid's binaries (braid_run, braid_train, ...).
//
// Exit codes: 0 success, 1 a failure (its Status on one stderr line), kExitBadFlags for bad flags.
// ParseCommandLine parses gflags so that an unknown or malformed flag exits with kExitBadFlags
// (gflags alone would exit with 1), and accepts dashes in flag names (--batch-size means
// --batch_size). It returns the positional arguments, argv[0] excluded.
//
//   std::vector<std::string> nets = ParseCommandLine(argc, argv, "braid_run NET [--iters K]");
#ifndef BRAID_TOOLS_COMMAND_LINE_H_
#define BRAID_TOOLS_COMMAND_LINE_H_

#include <functional>
#include <string>
#include <vector>

namespace braid {

constexpr int kExitBadFlags = 2;

std::vector<std::string> ParseCommandLine(int argc, char** argv, const std::string& usage);

// Runs body; returns 0 when it returns. When it throws (braid::Error or std::exception), prints the
// Status on one stderr line (newlines joined with "; ") and returns 1, or kExitBadFlags when it is
// an InvalidArgument naming the tool ("<tool>: ...", a flag found bad after parsing).
int RunTool(const std::string& tool, const std::function<void()>& body);

}  // namespace braid

#endif  // BRAID_TOOLS_COMMAND_LINE_H_
