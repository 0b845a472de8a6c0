#include "runtime/model_folder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace braid {
namespace {

NetDef NamedNet(const std::string& name, const std::string& op_type) {
  NetDef net;
  net.set_name(name);
  OperatorDef* op = net.add_op();
  op->set_type(op_type);
  op->add_output("y");
  return net;
}

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(ModelFolderTest, ReadsBackWhatItWrote) {
  const std::string dir = FreshDir("zoo_round_trip");
  WriteModelFolder(dir, NamedNet("m_init", "ConstantFill"), NamedNet("m", "Relu"), "data",
                   {1, 3, 227, 227});
  ModelFolder model;
  const Status status = LoadModelFolder(dir, &model);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(model.init_net.name(), "m_init");
  EXPECT_EQ(model.predict_net.op(0).type(), "Relu");
  EXPECT_EQ(model.input_name, "data");
  EXPECT_EQ(model.input_dtype, DType::kFloat32);
  EXPECT_EQ(model.input_shape, (std::vector<int64_t>{1, 3, 227, 227}));
}

TEST(ModelFolderTest, ParsesZooValueInfoSpellings) {
  ModelFolder model;
  // As the zoo's squeezenet folder spells it, and with other whitespace, escapes and types.
  ASSERT_TRUE(ParseValueInfoJson("{\"data\": [1, [1, 3, 227, 227]]}", "v", &model).ok());
  EXPECT_EQ(model.input_shape, (std::vector<int64_t>{1, 3, 227, 227}));
  ASSERT_TRUE(ParseValueInfoJson("\n{ \"in\\\"put\\u0031\" :[10,[ 4 ,2 ]] }\n", "v", &model).ok());
  EXPECT_EQ(model.input_name, "in\"put1");
  EXPECT_EQ(model.input_dtype, DType::kInt64);
  EXPECT_EQ(model.input_shape, (std::vector<int64_t>{4, 2}));
  ASSERT_TRUE(ParseValueInfoJson("{\"s\": [13, []]}", "v", &model).ok());
  EXPECT_EQ(model.input_dtype, DType::kFloat64);
  EXPECT_TRUE(model.input_shape.empty());
  EXPECT_EQ(ValueInfoJson("a\"b", {2, 3}), "{\"a\\\"b\": [1, [2, 3]]}\n");
  ASSERT_TRUE(ParseValueInfoJson(ValueInfoJson("a\"b", {2, 3}), "v", &model).ok());
  EXPECT_EQ(model.input_name, "a\"b");
}

void ExpectRefused(const std::string& text, const std::string& fragment) {
  ModelFolder model;
  const Status status = ParseValueInfoJson(text, "dir/value_info.json", &model);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << text;
  EXPECT_EQ(status.message().rfind("dir/value_info.json: ", 0), 0u) << status.message();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
}

TEST(ModelFolderTest, RefusesMalformedValueInfoNamingTheFile) {
  ExpectRefused("", "expected '{'");
  ExpectRefused("{\"data\": [1, [1, 3, 2.5]]}", "expected a dimension >= 0");
  ExpectRefused("{\"data\": [1, [1, -3]]}", "expected a dimension >= 0");
  ExpectRefused("{\"data\": [\"float\", [1]]}", "expected the element type");
  ExpectRefused("{\"data\": [1, [1]]", "expected '}'");
  ExpectRefused("{\"data\": [1, [1]]} trailing", "expected '}' and the end of the text");
  ExpectRefused("{\"a\": [1, [1]], \"b\": [1, [2]]}", "one input; 'a' is followed by another");
  ExpectRefused("{\"data\": [12, [1]]}", "element type 12, which braid lacks");
}

TEST(ModelFolderTest, MissingOrBrokenFilesAreNamed) {
  ModelFolder model;
  Status status = LoadModelFolder(FreshDir("no_such_zoo"), &model);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("no_such_zoo' does not exist"), std::string::npos);

  const std::string dir = FreshDir("broken_zoo");
  WriteModelFolder(dir, NamedNet("i", "ConstantFill"), NamedNet("p", "Relu"), "data", {1});
  std::filesystem::remove(dir + "/value_info.json");
  status = LoadModelFolder(dir, &model);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find(dir + "/value_info.json"), std::string::npos) << status.message();

  std::ofstream(dir + "/predict_net.pb", std::ios::binary) << "\xff\xff not a proto";
  status = LoadModelFolder(dir, &model);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(dir + "/predict_net.pb"), std::string::npos) << status.message();

  std::filesystem::remove(dir + "/init_net.pb");
  status = LoadModelFolder(dir, &model);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find(dir + "/init_net.pb"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace braid
