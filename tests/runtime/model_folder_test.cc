#include "runtime/io/model_folder.h"

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

ModelFolder NamedModel(const std::vector<ValueInfo>& inputs) {
  ModelFolder model;
  model.init_net = NamedNet("m_init", "ConstantFill");
  model.predict_net = NamedNet("m", "Relu");
  model.inputs = inputs;
  return model;
}

TEST(ModelFolderTest, ReadsBackWhatItWroteInputsInOrder) {
  const std::string dir = FreshDir("zoo_round_trip");
  ASSERT_TRUE(WriteModelFolder(dir, NamedModel({{"data", DType::kFloat32, {1, 3, 227, 227}},
                                                {"im_info", DType::kFloat32, {1, 3}},
                                                {"a\"b", DType::kInt64, {}}}))
                  .ok());
  ModelFolder model;
  const Status status = LoadModelFolder(dir, &model);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(model.init_net.name(), "m_init");
  EXPECT_EQ(model.predict_net.op(0).type(), "Relu");
  ASSERT_EQ(model.inputs.size(), 3u);
  EXPECT_EQ(model.inputs[0].name, "data");
  EXPECT_EQ(model.inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(model.inputs[0].shape, (std::vector<int64_t>{1, 3, 227, 227}));
  EXPECT_EQ(model.inputs[1].name, "im_info");
  EXPECT_EQ(model.inputs[1].shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(model.inputs[2].name, "a\"b");
  EXPECT_EQ(model.inputs[2].dtype, DType::kInt64);
  EXPECT_TRUE(model.inputs[2].shape.empty());
  EXPECT_EQ(model.FindInput("im_info"), &model.inputs[1]);
  EXPECT_EQ(model.FindInput("label"), nullptr);
}

TEST(ModelFolderTest, ParsesZooValueInfoSpellings) {
  std::vector<ValueInfo> inputs;
  // As the zoo's squeezenet folder spells it, and with other whitespace, escapes and types.
  ASSERT_TRUE(ParseValueInfoJson("{\"data\": [1, [1, 3, 227, 227]]}", "v", &inputs).ok());
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].shape, (std::vector<int64_t>{1, 3, 227, 227}));
  ASSERT_TRUE(ParseValueInfoJson("\n{ \"in\\\"put\\u0031\" :[10,[ 4 ,2 ]] }\n", "v", &inputs).ok());
  EXPECT_EQ(inputs[0].name, "in\"put1");
  EXPECT_EQ(inputs[0].dtype, DType::kInt64);
  EXPECT_EQ(inputs[0].shape, (std::vector<int64_t>{4, 2}));
  ASSERT_TRUE(ParseValueInfoJson("{\"s\": [13, []], \"t\": [6, [2]]}", "v", &inputs).ok());
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].dtype, DType::kFloat64);
  EXPECT_TRUE(inputs[0].shape.empty());
  EXPECT_EQ(inputs[1].dtype, DType::kUInt8);
  EXPECT_EQ(ValueInfoJson({{"a\"b", DType::kFloat32, {2, 3}}, {"c", DType::kInt32, {}}}),
            "{\"a\\\"b\": [1, [2, 3]], \"c\": [2, []]}\n");
}

void ExpectRefused(const std::string& text, const std::string& fragment) {
  std::vector<ValueInfo> inputs;
  const Status status = ParseValueInfoJson(text, "dir/value_info.json", &inputs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << text;
  EXPECT_EQ(status.message().rfind("dir/value_info.json: ", 0), 0u) << status.message();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
}

TEST(ModelFolderTest, RefusesMalformedValueInfoNamingTheFile) {
  ExpectRefused("", "not JSON");
  ExpectRefused("{\"data\": [1, [1]]", "not JSON");
  ExpectRefused("{\"data\": [1, [1]]} trailing", "not JSON");
  ExpectRefused("{}", "expected an object naming at least one input");
  ExpectRefused("[1, [1]]", "expected an object naming at least one input");
  ExpectRefused("{\"data\": [1, [1, 3, 2.5]]}", "input 'data': expected dimensions >= 0");
  ExpectRefused("{\"data\": [1, [1, -3]]}", "expected dimensions >= 0");
  ExpectRefused("{\"data\": [\"float\", [1]]}", "expected the element type");
  ExpectRefused("{\"data\": [1, 3]}", "expected the shape");
  ExpectRefused("{\"a\": [1, [1]], \"b\": [1]}", "input 'b': expected [TYPE, [DIM, ...]]");
  ExpectRefused("{\"data\": [4, [1]]}", "element type 4, which braid lacks");
}

TEST(ModelFolderTest, MissingOrBrokenFilesAreNamed) {
  ModelFolder model;
  Status status = LoadModelFolder(FreshDir("no_such_zoo"), &model);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("no_such_zoo' does not exist"), std::string::npos);

  const std::string dir = FreshDir("broken_zoo");
  ASSERT_TRUE(WriteModelFolder(dir, NamedModel({{"data", DType::kFloat32, {1}}})).ok());
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
