// NetDef binary format (.pb, Caffe2's model zoo): parse, then plan and build.
#include <cstddef>
#include <cstdint>

#include "fuzz/net_checks.h"
#include "proto/braid.pb.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  braid::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  braid::NetDef net;
  if (!net.ParseFromArray(data, static_cast<int>(size))) return 0;
  braid::fuzz::PlanAndBuild(net, {});
  return 0;
}
