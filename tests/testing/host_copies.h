// Tensors on any device (cpu, sim, cuda) read on the host, for tests that compare runs: as raw
// bytes, to compare bit for bit, or as floats.
//
//   EXPECT_EQ(HostBytes(*gpu.GetBlob("w")), HostBytes(*cpu.GetBlob("w")));
//   const std::vector<float> w = HostFloats(*ws.GetBlob("w"));   // float32 tensors only
//
// Each call copies the whole tensor. Thread safety: as Tensor::CopyFrom.
#ifndef BRAID_TESTS_TESTING_HOST_COPIES_H_
#define BRAID_TESTS_TESTING_HOST_COPIES_H_

#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace braid {

// The tensor's bytes ("" for an empty one).
inline std::string HostBytes(const Tensor& t) {
  Tensor host;
  host.CopyFrom(t);
  return host.numel() == 0 ? std::string()
                           : std::string(static_cast<const char*>(host.raw_data()), host.nbytes());
}

inline std::vector<float> HostFloats(const Tensor& t) {
  Tensor host;
  host.CopyFrom(t);
  const float* p = host.data<float>();
  return std::vector<float>(p, p + host.numel());
}

}  // namespace braid

#endif  // BRAID_TESTS_TESTING_HOST_COPIES_H_
