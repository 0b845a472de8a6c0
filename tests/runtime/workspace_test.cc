#include "runtime/core/workspace.h"

#include <gtest/gtest.h>

#include "runtime/exec/net.h"
#include "testing/net_text.h"

namespace braid {
namespace {

TEST(WorkspaceTest, CreateBlobReturnsTheSameBlobForOneName) {
  Workspace ws;
  Tensor* a = ws.CreateBlob("a");
  EXPECT_EQ(ws.CreateBlob("a"), a);
  EXPECT_EQ(ws.GetBlob("a"), a);
  EXPECT_EQ(ws.GetBlob("b"), nullptr);
  EXPECT_EQ(ws.LocalBlobNames(), std::vector<std::string>{"a"});
}

TEST(WorkspaceTest, ChildResolvesMissingNamesInParent) {
  Workspace parent;
  Tensor* w = parent.CreateBlob("w");
  Workspace child(&parent);
  EXPECT_EQ(child.GetBlob("w"), w);
  EXPECT_EQ(child.CreateBlob("w"), w);  // shared, not shadowed
  Tensor* act = child.CreateBlob("act");
  EXPECT_EQ(parent.GetBlob("act"), nullptr);
  EXPECT_EQ(child.GetBlob("act"), act);
  EXPECT_EQ(child.LocalBlobNames(), std::vector<std::string>{"act"});
}

TEST(WorkspaceTest, ChildNetReadsParentBlobs) {
  Workspace parent;
  parent.CreateBlob("w")->Resize(DType::kFloat32, {1});
  Workspace child(&parent);
  Net* net = child.CreateNet(testing::NetFromText(R"(name: "test"
    op { type: "NoOp" input: "w" output: "out" })"));
  ASSERT_NE(net, nullptr);
  EXPECT_TRUE(net->Run().ok());
  EXPECT_EQ(child.GetNet("test"), net);
  EXPECT_EQ(parent.GetNet("test"), nullptr);
}

TEST(WorkspaceTest, CreateNetReplacesANetOfTheSameName) {
  Workspace ws;
  Net* first = ws.CreateNet(testing::NetFromText(R"(name: "n" op { type: "NoOp" })"));
  Net* second = ws.CreateNet(testing::NetFromText(R"(name: "n" op { type: "NoOp" } op { type: "NoOp" })"));
  EXPECT_EQ(ws.GetNet("n"), second);
  EXPECT_EQ(second->num_ops(), 2);
  (void)first;
}

TEST(WorkspaceTest, RunNetOnceReportsBuildErrorsAsStatus) {
  Workspace ws;
  Status s = ws.RunNetOnce(testing::NetFromText(R"(name: "init" op { type: "Nope" })"));
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("net 'init' op #0"), std::string::npos);
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

// The zoo's ResNet-50 lists an input queue no op reads: Caffe2 creates it empty and runs, so does
// braid.
TEST(WorkspaceTest, AnExternalInputNoOpReadsNeedsNoData) {
  Workspace ws;
  Net* net = ws.CreateNet(testing::NetFromText(R"(name: "n" external_input: "queue"
    op { type: "ConstantFill" output: "y" arg { name: "shape" ints: 2 } })"));
  EXPECT_TRUE(net->Run().ok());
  EXPECT_TRUE(ws.HasBlob("queue"));
}

TEST(WorkspaceTest, DeclaredExternalInputMayBeFedAfterTheNetIsBuilt) {
  Workspace ws;
  Net* net = ws.CreateNet(testing::NetFromText(R"(name: "n" external_input: "x"
    op { type: "Relu" input: "x" output: "y" })"));
  Status unfed = net->Run();
  EXPECT_EQ(unfed.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(unfed.message().find("external input 'x' has no data"), std::string::npos);
  Tensor* x = ws.GetBlob("x");
  x->Resize(DType::kFloat32, {2});
  x->mutable_data<float>()[0] = -1.f;
  x->mutable_data<float>()[1] = 3.f;
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(ws.GetBlob("y")->data<float>()[1], 3.f);
}

}  // namespace
}  // namespace braid
