#include "runtime/exec/net_args.h"

#include <gtest/gtest.h>

#include "braid/status.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "testing/net_text.h"

namespace braid {
namespace {

using ::braid::testing::NetFromText;

// The Status BuildNet throws for a net "n" of type `type` with the net-level `args` text.
Status BuildError(const std::string& args, const std::string& type = "dag") {
  Workspace ws;
  const std::string text =
      "name: \"n\" type: \"" + type + "\" " + args + R"( op { type: "NoOp" output: "a" })";
  return StatusFromCall([&] { BuildNet(NetFromText(text), &ws); });
}

TEST(NetArgsTest, NegativeNumWorkersNamesTheNetTheValueAndTheRange) {
  const Status s = BuildError(R"(arg { name: "num_workers" i: -3 })");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "net 'n': argument 'num_workers' = -3 is out of range (valid: 0 to 1024; 0: one "
            "worker per hardware thread)");
}

TEST(NetArgsTest, TheSimpleExecutorChecksTheArgumentsToo) {
  EXPECT_FALSE(BuildError(R"(arg { name: "num_workers" i: -3 })", "simple").ok());
}

TEST(NetArgsTest, ValuesInsideTheRangesBuild) {
  EXPECT_TRUE(BuildError(R"(arg { name: "num_workers" i: 0 }
                            arg { name: "first_iter_only_one_worker" i: 1 }
                            arg { name: "intra_op_threads" i: 2 })")
                  .ok());
  EXPECT_TRUE(BuildError(R"(arg { name: "num_workers" i: 1024 })").ok());
}

TEST(NetArgsTest, ValuesPastTheUpperBoundsAreRefused) {
  EXPECT_NE(BuildError(R"(arg { name: "num_workers" i: 4294967297 })")
                .message()
                .find("argument 'num_workers' = 4294967297 is out of range"),
            std::string::npos);
  EXPECT_NE(BuildError(R"(arg { name: "first_iter_only_one_worker" i: 2 })")
                .message()
                .find("argument 'first_iter_only_one_worker' = 2 is out of range (valid: 0 or 1)"),
            std::string::npos);
  EXPECT_NE(BuildError(R"(arg { name: "intra_op_threads" i: -1 })")
                .message()
                .find("argument 'intra_op_threads' = -1 is out of range"),
            std::string::npos);
}

TEST(NetArgsTest, UnknownNetArgumentListsTheAcceptedOnes) {
  EXPECT_EQ(BuildError(R"(arg { name: "num_worker" i: 2 })").message(),
            "net 'n': unknown argument 'num_worker' (did you mean 'num_workers'? accepted: "
            "first_iter_only_one_worker, intra_op_threads, num_workers, strict_args)");
}

TEST(NetArgsTest, WrongKindIsRefused) {
  EXPECT_EQ(BuildError(R"(arg { name: "num_workers" s: "4" })").message(),
            "net 'n': argument 'num_workers' must be an int (i), got a string (s) \"4\"");
}

TEST(NetArgsTest, DeprecatedNumWorkersFieldIsCheckedAlike) {
  EXPECT_EQ(BuildError("num_workers: -3").message(),
            "net 'n': field num_workers = -3 is out of range (valid: 0 to 1024; 0: one worker "
            "per hardware thread)");
  EXPECT_TRUE(BuildError("num_workers: 2").ok());
}

}  // namespace
}  // namespace braid
