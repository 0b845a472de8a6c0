#include "runtime/io/proto_io.h"

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "braid/status.h"

namespace braid {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name;
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

TEST(ProtoIoTest, TextErrorReportsFileLineAndColumn) {
  std::string path = TempPath("bad.pbtxt");
  WriteFile(path, "name: \"n\"\nop {\n  type: \"Relu\"\n  input: x\n}\n");
  try {
    LoadNetDef(path);
    FAIL() << "expected a parse error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(e.status().message().find(path + ":4:10:"), std::string::npos) << e.what();
  }
}

TEST(ProtoIoTest, UnknownFieldIsAnErrorWithPosition) {
  try {
    NetDef net;
    ParseTextProto("name: \"n\"\nopp { }\n", "<s>", &net);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("<s>:2:"), std::string::npos) << e.what();
    EXPECT_NE(e.status().message().find("opp"), std::string::npos) << e.what();
  }
}

TEST(ProtoIoTest, BinaryThatDoesNotParseIsRejected) {
  std::string path = TempPath("bad.pb");
  WriteFile(path, std::string("\x0a\xff\xff\xff", 4));
  try {
    LoadNetDef(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("not a valid binary"), std::string::npos) << e.what();
  }
}

TEST(ProtoIoTest, MissingFileIsNotFound) {
  try {
    LoadNetDef(TempPath("does_not_exist.pbtxt"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kNotFound);
  }
}

TEST(ProtoIoTest, TextAndBinaryRoundTrip) {
  NetDef net;
  net.set_name("round");
  net.set_type("dag");
  OperatorDef* op = net.add_op();
  op->set_type("Relu");
  op->add_input("x");
  op->add_output("y");
  op->add_control_input("c");
  op->mutable_device_option()->set_device_id(1);
  for (const char* name : {"net.pbtxt", "net.pb"}) {
    std::string path = TempPath(name);
    SaveProto(net, path);
    EXPECT_EQ(LoadNetDef(path).SerializeAsString(), net.SerializeAsString()) << name;
  }
}

// Field numbers are Caffe2's: these bytes are a Caffe2 NetDef {name: "c2", op {input: "x",
// output: "y", type: "Relu", device_option {device_type: 1, device_id: 3}, control_input: "z"},
// type: "dag", external_input: "x", external_output: "y"} serialised by caffe2.proto.
TEST(ProtoIoTest, ReadsCaffe2WireFormat) {
  const std::string bytes =
      std::string("\x0a\x02" "c2", 4) +
      std::string("\x12\x15", 2) +
      std::string("\x0a\x01" "x" "\x12\x01" "y" "\x22\x04" "Relu" "\x32\x04\x08\x01\x10\x03"
                  "\x42\x01" "z", 21) +
      std::string("\x1a\x03" "dag", 5) + std::string("\x3a\x01" "x", 3) + std::string("\x42\x01" "y", 3);
  NetDef net;
  ASSERT_TRUE(net.ParseFromString(bytes));
  EXPECT_EQ(net.name(), "c2");
  EXPECT_EQ(net.type(), "dag");
  ASSERT_EQ(net.op_size(), 1);
  EXPECT_EQ(net.op(0).type(), "Relu");
  EXPECT_EQ(net.op(0).device_option().device_type(), 1);
  EXPECT_EQ(net.op(0).device_option().device_id(), 3);
  EXPECT_EQ(net.op(0).control_input(0), "z");
  EXPECT_EQ(net.external_input(0), "x");
  EXPECT_EQ(net.external_output(0), "y");
}

}  // namespace
}  // namespace braid
