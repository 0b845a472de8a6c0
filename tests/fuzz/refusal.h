// How a file harness tells a refusal from a finding: braid refuses bad input with a Status of its
// own code (InvalidArgument, NotFound, IoError, ...); Internal is what StatusFromCall makes of an
// exception that is not a braid::Error (std::out_of_range, std::length_error, ...), which bad
// input must never raise.
#ifndef BRAID_TESTS_FUZZ_REFUSAL_H_
#define BRAID_TESTS_FUZZ_REFUSAL_H_

#include <cstdio>
#include <cstdlib>

#include "braid/status.h"

namespace braid::fuzz {

// True when `status` refuses the input; aborts (a finding) on an Internal status.
inline bool Refused(const Status& status) {
  if (status.code() == StatusCode::kInternal) {
    std::fprintf(stderr, "an input raised an exception that is not a braid::Error: %s\n",
                 status.ToString().c_str());
    std::abort();
  }
  return !status.ok();
}

}  // namespace braid::fuzz

#endif  // BRAID_TESTS_FUZZ_REFUSAL_H_
