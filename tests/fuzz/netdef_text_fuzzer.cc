// NetDef text format (.pbtxt, what braid_run and braid_plan read): parse, then plan and build.
#include <cstddef>
#include <cstdint>
#include <string>

#include "braid/status.h"
#include "fuzz/net_checks.h"
#include "runtime/io/proto_io.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  braid::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  braid::NetDef net;
  try {
    braid::ParseTextProto(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>", &net);
  } catch (const braid::Error&) {
    return 0;
  }
  braid::fuzz::PlanAndBuild(net, {});
  return 0;
}
