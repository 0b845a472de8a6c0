#include "runtime/core/arg_spec.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

namespace braid {
namespace {

const std::vector<ArgSpec>& Specs() {
  static const auto* specs = new std::vector<ArgSpec>{
      {"n", ArgKind::kInt},
      {"x", ArgKind::kFloat},
      {"name", ArgKind::kString},
      {"dims", ArgKind::kInts},
      {"values", ArgKind::kFloats},
      {"names", ArgKind::kStrings},
      {"type", ArgKind::kInt | ArgKind::kString},
      {"ratio", ArgKind::kInt, 1, 4, "1 to 4"},
  };
  return *specs;
}

// CheckArguments over the arguments of `op_text` (OperatorDef text), against Specs().
std::string Check(const std::string& op_text, bool any_name = false) {
  OperatorDef op;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(op_text, &op)) << op_text;
  AcceptedArgs accepted;
  accepted.groups.push_back(&Specs());
  accepted.any_name = any_name;
  return CheckArguments(op.arg(), accepted);
}

TEST(ArgSpecTest, EachKindAcceptsItsField) {
  EXPECT_EQ(Check(R"(arg { name: "n" i: 3 } arg { name: "x" f: 0.5 } arg { name: "name" s: "a" }
                    arg { name: "dims" ints: 1 ints: 2 } arg { name: "values" floats: 1.5 }
                    arg { name: "names" strings: "a" })"),
            "");
}

TEST(ArgSpecTest, FloatAcceptsAnIntButNoOtherKindConverts) {
  EXPECT_EQ(Check(R"(arg { name: "x" i: 2 })"), "");
  EXPECT_EQ(Check(R"(arg { name: "n" f: 2 })"),
            "argument 'n' must be an int (i), got a float (f) 2.000000");
  EXPECT_EQ(Check(R"(arg { name: "values" ints: 1 ints: 2 })"),
            "argument 'values' must be a list of floats (floats), got a list of ints (ints)");
  EXPECT_EQ(Check(R"(arg { name: "dims" i: 3 })"),
            "argument 'dims' must be a list of ints (ints), got an int (i) 3");
}

TEST(ArgSpecTest, StringWhereIntsAreExpectedNamesBothKindsAndTheValue) {
  EXPECT_EQ(Check(R"(arg { name: "dims" s: "3" })"),
            "argument 'dims' must be a list of ints (ints), got a string (s) \"3\"");
}

TEST(ArgSpecTest, AnArgumentWithNoValueIsAnEmptyListButNoScalar) {
  EXPECT_EQ(Check(R"(arg { name: "dims" })"), "");
  EXPECT_EQ(Check(R"(arg { name: "names" })"), "");
  EXPECT_EQ(Check(R"(arg { name: "n" })"), "argument 'n' must be an int (i), got no value");
}

TEST(ArgSpecTest, SeveralValuesAreRefused) {
  EXPECT_EQ(Check(R"(arg { name: "n" i: 1 ints: 2 })"),
            "argument 'n' must be an int (i), got several values (i, ints)");
}

TEST(ArgSpecTest, TensorsAndNetsAreNoDeclaredKind) {
  EXPECT_EQ(Check(R"(arg { name: "dims" t { dims: 1 } })"),
            "argument 'dims' must be a list of ints (ints), got a tensor (t)");
}

TEST(ArgSpecTest, SeveralKindsAreListedInTheError) {
  EXPECT_EQ(Check(R"(arg { name: "type" s: "FLOAT" })"), "");
  EXPECT_EQ(Check(R"(arg { name: "type" i: 1 })"), "");
  EXPECT_EQ(Check(R"(arg { name: "type" f: 1.5 })"),
            "argument 'type' must be an int (i) or a string (s), got a float (f) 1.500000");
}

TEST(ArgSpecTest, UnknownNameListsTheAcceptedOnesSorted) {
  EXPECT_EQ(Check(R"(arg { name: "n" i: 1 } arg { name: "foo" i: 1 })"),
            "unknown argument 'foo' (accepted: dims, n, name, names, ratio, type, values, x)");
}

TEST(ArgSpecTest, AnyNameAcceptsUnknownNamesAndStillChecksDeclaredOnes) {
  EXPECT_EQ(Check(R"(arg { name: "foo" s: "bar" })", /*any_name=*/true), "");
  EXPECT_EQ(Check(R"(arg { name: "foo" s: "bar" } arg { name: "n" s: "1" })", true),
            "argument 'n' must be an int (i), got a string (s) \"1\"");
}

TEST(ArgSpecTest, RepeatedNameIsRefused) {
  EXPECT_EQ(Check(R"(arg { name: "n" i: 1 } arg { name: "n" i: 1 })"),
            "argument 'n' is given twice");
  EXPECT_EQ(Check(R"(arg { name: "foo" i: 1 } arg { name: "foo" i: 2 })", true),
            "argument 'foo' is given twice");
}

TEST(ArgSpecTest, IntOutsideItsRangeNamesTheValueAndTheRange) {
  EXPECT_EQ(Check(R"(arg { name: "ratio" i: 1 })"), "");
  EXPECT_EQ(Check(R"(arg { name: "ratio" i: 4 })"), "");
  EXPECT_EQ(Check(R"(arg { name: "ratio" i: 0 })"),
            "argument 'ratio' = 0 is out of range (valid: 1 to 4)");
  EXPECT_EQ(Check(R"(arg { name: "ratio" i: 5 })"),
            "argument 'ratio' = 5 is out of range (valid: 1 to 4)");
}

TEST(ArgSpecTest, LongStringsAreShortenedInErrors) {
  const std::string long_value(100, 'a');
  EXPECT_EQ(
      Check(R"(arg { name: "n" s: ")" + long_value + R"(" })"),
      "argument 'n' must be an int (i), got a string (s) \"" + std::string(40, 'a') + "...\"");
}

}  // namespace
}  // namespace braid
