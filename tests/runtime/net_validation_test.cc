#include <gtest/gtest.h>

#include "braid/status.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "testing/net_text.h"

namespace braid {
namespace {

using ::braid::testing::NetFromText;

// The Status BuildNet throws for `text` in a workspace holding blob "x".
Status BuildError(const std::string& text) {
  Workspace ws;
  ws.CreateBlob("x")->Resize(DType::kFloat32, {2});
  return StatusFromCall([&] { BuildNet(NetFromText(text), &ws); });
}

void ExpectContains(const Status& s, const std::vector<std::string>& parts) {
  EXPECT_FALSE(s.ok());
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.ToString();
  }
}

TEST(NetValidationTest, UnknownTypeNamesTheOpAndTheClosestKnownTypes) {
  Status s = BuildError(R"(name: "n" op { type: "NoOp" } op { type: "NoOpp" name: "bad" })");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  ExpectContains(s, {"net 'n'", "op #1", "NoOpp 'bad'", "unknown op type", "closest known: NoOp"});
}

TEST(NetValidationTest, WrongArityIsRejected) {
  Status s = BuildError(R"(name: "n" op { type: "TestEnforcedInplace" input: "x" name: "e" })");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  ExpectContains(s, {"op #0", "TestEnforcedInplace 'e'", "takes 1 outputs, got 0"});
}

TEST(NetValidationTest, InPlaceTheSchemaDoesNotAllowIsRejected) {
  Status s = BuildError(R"(name: "n" op { type: "TestSleep" input: "x" output: "x" })");
  ExpectContains(s, {"op #0", "same blob 'x'", "does not allow in-place"});
}

TEST(NetValidationTest, EnforcedInPlaceWithDistinctBlobsIsRejected) {
  Status s = BuildError(R"(name: "n" op { type: "TestEnforcedInplace" input: "x" output: "y" })");
  ExpectContains(s, {"'x'", "'y'", "must be the same blob"});
  EXPECT_TRUE(BuildError(R"(name: "n" op { type: "TestEnforcedInplace" input: "x" output: "x" })").ok());
}

TEST(NetValidationTest, MissingInputBlobIsNamed) {
  Status s = BuildError(R"(name: "n"
    op { type: "NoOp" input: "x" output: "a" }
    op { type: "NoOp" input: "a" input: "ghost" output: "b" name: "reader" })");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  ExpectContains(s, {"op #1", "input blob 'ghost'"});
}

TEST(NetValidationTest, InputProducedOnlyByALaterOpIsMissing) {
  Status s = BuildError(R"(name: "n"
    op { type: "NoOp" input: "late" output: "a" }
    op { type: "NoOp" input: "x" output: "late" })");
  ExpectContains(s, {"op #0", "input blob 'late'"});
}

TEST(NetValidationTest, MissingControlInputIsNamed) {
  Status s = BuildError(R"(name: "n" op { type: "NoOp" input: "x" output: "a" control_input: "c" })");
  ExpectContains(s, {"control input blob 'c'"});
}

TEST(NetValidationTest, UnproducedExternalOutputIsNamed) {
  Status s = BuildError(R"(name: "n" op { type: "NoOp" input: "x" output: "a" } external_output: "z")");
  ExpectContains(s, {"net 'n'", "external output 'z'"});
}

TEST(NetValidationTest, UnknownExecutorAndDeviceAreRejected) {
  ExpectContains(BuildError(R"(name: "n" type: "turbo" op { type: "NoOp" })"),
                 {"unknown executor type 'turbo'"});
  ExpectContains(BuildError(R"(name: "n" op { type: "NoOp" device_option { device_type: 7 } })"),
                 {"op #0", "unknown device_type 7"});
}

TEST(NetValidationTest, NetDeviceOptionAppliesToOpsWithoutOne) {
#ifndef BRAID_WITH_CUDA
  ExpectContains(BuildError(R"(name: "n" device_option { device_type: 1 } op { type: "NoOp" })"),
                 {"op #0", "no kernel for device cuda:0"});
#endif
  EXPECT_TRUE(BuildError(R"(name: "n" device_option { device_type: 0 } op { type: "NoOp" })").ok());
}

TEST(NetValidationTest, ValidNetBuildsWithBothExecutors) {
  for (const char* type : {"simple", "dag", ""}) {
    Status s = BuildError(std::string("name: \"n\" type: \"") + type + R"(" 
      op { type: "NoOp" input: "x" output: "a" }
      op { type: "NoOp" input: "a" output: "a" })");
    EXPECT_TRUE(s.ok()) << type << ": " << s.ToString();
  }
}

}  // namespace
}  // namespace braid
