// RunInitNet (runtime/exec/init_net.h): op by op, the same blobs as running the net whole; errors
// name the op by its place in the init net; a malformed net fails before any op runs.
#include "runtime/exec/init_net.h"

#include <gtest/gtest.h>

#include <cstring>

#include "runtime/core/tensor.h"
#include "runtime/core/workspace.h"
#include "testing/net_text.h"

namespace braid {
namespace {

using braid::testing::NetFromText;

constexpr char kInit[] = R"(name: "weights"
  op { type: "GivenTensorFill" output: "w" arg { name: "shape" ints: 2 ints: 2 }
       arg { name: "values" floats: [1, 2, 3, 4] } }
  op { type: "GivenTensorInt64Fill" output: "ids" arg { name: "shape" ints: 3 }
       arg { name: "values" ints: [7, -8, 9] } }
  op { type: "ConstantFill" output: "b" arg { name: "shape" ints: 2 } arg { name: "value" f: 0.5 } }
  op { type: "Copy" input: "w" output: "w_copy" })";

TEST(InitNetTest, FillsTheSameBlobsAsRunningTheNetWhole) {
  Workspace whole, op_by_op;
  ASSERT_TRUE(whole.RunNetOnce(NetFromText(kInit)).ok());
  const Status status = RunInitNet(NetFromText(kInit), &op_by_op);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(op_by_op.LocalBlobNames(), whole.LocalBlobNames());
  for (const std::string& name : whole.LocalBlobNames()) {
    const Tensor& want = *whole.GetBlob(name);
    const Tensor& got = *op_by_op.GetBlob(name);
    ASSERT_EQ(got.ShapeString(), want.ShapeString()) << name;
    EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), want.nbytes()), 0) << name;
  }
  EXPECT_EQ(op_by_op.GetBlob("w_copy")->data<float>()[3], 4.f);
}

// Caffe2's init nets may list the blobs they write as external outputs; each one-op net writes
// only its own, and a listed blob no op writes is still refused, naming it.
TEST(InitNetTest, ExternalOutputsAreCheckedForTheWholeNetNotPerOp) {
  Workspace ws;
  const std::string listed =
      std::string(kInit) + R"( external_output: "w" external_output: "ids" external_output: "b")";
  const Status status = RunInitNet(NetFromText(listed), &ws);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ws.GetBlob("b")->data<float>()[1], 0.5f);
  Workspace other;
  const Status missing =
      RunInitNet(NetFromText(std::string(kInit) + R"( external_output: "nowhere")"), &other);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("'nowhere'"), std::string::npos) << missing.ToString();
}

TEST(InitNetTest, AFailingOpIsNamedByItsPlaceInTheInitNet) {
  Workspace ws;
  const Status status = RunInitNet(NetFromText(R"(name: "weights"
      op { type: "ConstantFill" output: "a" arg { name: "shape" ints: 2 } }
      op { type: "ConstantFill" output: "b" arg { name: "shape" ints: 3 } }
      op { type: "Add" input: "a" input: "b" output: "c" name: "mismatch" })"),
                                   &ws);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("net 'weights' op #2 (Add 'mismatch')"), std::string::npos)
      << status.message();
}

TEST(InitNetTest, AMalformedNetFailsBeforeAnyOpRuns) {
  Workspace ws;
  const Status status = RunInitNet(NetFromText(R"(name: "weights"
      op { type: "ConstantFill" output: "a" arg { name: "shape" ints: 2 } }
      op { type: "Relu" input: "missing" output: "r" })"),
                                   &ws);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("op #1 (Relu"), std::string::npos) << status.message();
  EXPECT_FALSE(ws.HasBlob("a"));
}

}  // namespace
}  // namespace braid
