// Command-line conventions shared by braid's binaries (braid_run, braid_train, ...).
//
// Exit codes: 0 success, 1 a failure (its Status on one stderr line), kExitBadFlags for bad flags.
// ParseCommandLine parses gflags so that an unknown or malformed flag exits with kExitBadFlags
// (gflags alone would exit with 1), and accepts dashes in flag names (--batch-size means
// --batch_size). It returns the positional arguments, argv[0] excluded. Every binary has the flag
// --device-memory (each simulated GPU's capacity, runtime/device/sim/sim_device.h), applied here.
//
//   std::vector<std::string> nets = ParseCommandLine(argc, argv, "braid_run NET [--iters K]");
#ifndef BRAID_TOOLS_COMMAND_LINE_H_
#define BRAID_TOOLS_COMMAND_LINE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/core/device.h"

namespace braid {

constexpr int kExitBadFlags = 2;

std::vector<std::string> ParseCommandLine(int argc, char** argv, const std::string& usage);

// Runs body; returns 0 when it returns. When it throws (braid::Error or std::exception), prints the
// Status on one stderr line (newlines joined with "; ") and returns 1, or kExitBadFlags when it is
// an InvalidArgument naming the tool ("<tool>: ...", a flag found bad after parsing).
int RunTool(const std::string& tool, const std::function<void()>& body);

// "16G", "512M", "64K", "1000": bytes (binary units). Throws braid::Error naming `flag` otherwise.
int64_t ParseByteSize(const std::string& text, const std::string& flag);
// As ParseByteSize, but "" and "0" are 0: a budget that is off unless given.
int64_t ParseBudget(const std::string& text, const std::string& flag);
// "1000,2000,3000": integers >= 0, "" none. Throws braid::Error naming `flag` otherwise.
std::vector<int64_t> ParseIntList(const std::string& text, const std::string& flag);
// "cpu:0,cpu:1", "sim:0,sim:1" or "cuda:0,cuda:1": distinct devices of one type. Throws
// braid::Error naming `tool` and `flag` otherwise; for a CUDA device this machine lacks, with
// CUDA's error ("cuda:0 does not exist: no CUDA-capable device is detected").
std::vector<Device> ParseDeviceList(const std::string& list, const std::string& tool,
                                    const std::string& flag);

}  // namespace braid

#endif  // BRAID_TOOLS_COMMAND_LINE_H_
