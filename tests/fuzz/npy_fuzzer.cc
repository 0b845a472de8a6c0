// .npy parsing. A file braid accepts must survive a round trip: writing the tensor and parsing
// that again gives the same type, shape and bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz/net_checks.h"
#include "fuzz/refusal.h"
#include "runtime/io/npy_file.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  braid::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  braid::Tensor parsed;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (braid::fuzz::Refused(braid::ParseNpy(bytes, "<fuzz>", &parsed))) return 0;
  std::string written;
  braid::Tensor again;
  const braid::Status wrote = braid::NpyBytes(parsed, &written);
  const braid::Status reparsed =
      wrote.ok() ? braid::ParseNpy(written, "<written>", &again) : wrote;
  if (!reparsed.ok() || again.dtype() != parsed.dtype() || again.shape() != parsed.shape() ||
      again.nbytes() != parsed.nbytes() ||
      (parsed.nbytes() > 0 &&
       std::memcmp(again.raw_data(), parsed.raw_data(), parsed.nbytes()) != 0)) {
    std::fprintf(stderr, "an accepted .npy does not round-trip: %s\n",
                 reparsed.ToString().c_str());
    std::abort();
  }
  return 0;
}
