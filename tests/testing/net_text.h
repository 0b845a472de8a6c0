// Test helper: a NetDef from text format, failing the test (via braid::Error) on a parse error.
#ifndef BRAID_TESTS_TESTING_NET_TEXT_H_
#define BRAID_TESTS_TESTING_NET_TEXT_H_

#include <string>

#include "proto/braid.pb.h"
#include "runtime/io/proto_io.h"

namespace braid::testing {

inline NetDef NetFromText(const std::string& text) {
  NetDef net;
  ParseTextProto(text, "<test>", &net);
  return net;
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_NET_TEXT_H_
