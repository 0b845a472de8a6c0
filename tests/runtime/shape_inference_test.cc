#include "runtime/core/shape_inference.h"

#include <gtest/gtest.h>

#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "testing/net_text.h"
#include "tools/stress/random_net.h"

namespace braid {
namespace {

TEST(ShapeInferenceTest, InferredShapesMatchWhatOpsProduceOnRandomNets) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    NetDef def = RandomNet(seed, {.num_inputs = 3, .num_ops = 30, .blob_size = 7});
    Workspace ws;
    std::map<std::string, ShapeInfo> inferred = InferBlobShapes(def, ShapesOfWorkspaceBlobs(def, ws));
    ASSERT_TRUE(ws.CreateNet(def)->Run().ok());
    for (const std::string& blob : def.external_output()) {
      const ShapeInfo& s = inferred.at(blob);
      ASSERT_TRUE(s.known) << "seed " << seed << " blob " << blob;
      EXPECT_EQ(s.dims, ws.GetBlob(blob)->shape()) << "seed " << seed << " blob " << blob;
      EXPECT_EQ(s.dtype, ws.GetBlob(blob)->dtype());
    }
  }
}

TEST(ShapeInferenceTest, UnknownInputShapesStayUnknown) {
  NetDef def = testing::NetFromText(R"(name: "n" op { type: "Relu" input: "x" output: "y" })");
  EXPECT_FALSE(InferBlobShapes(def, {}).at("y").known);
  auto shapes = InferBlobShapes(def, {{"x", ShapeInfo{DType::kFloat32, {2, 5}, true}}});
  EXPECT_TRUE(shapes.at("y").known);
  EXPECT_EQ(shapes.at("y").dims, (std::vector<int64_t>{2, 5}));
}

TEST(ShapeInferenceTest, FcShapeFollowsWeights) {
  NetDef def = testing::NetFromText(
      R"(name: "n" op { type: "FC" input: "x" input: "w" input: "b" output: "y" })");
  auto shapes = InferBlobShapes(def, {{"x", {DType::kFloat32, {8, 3}, true}},
                                      {"w", {DType::kFloat32, {4, 3}, true}},
                                      {"b", {DType::kFloat32, {4}, true}}});
  EXPECT_EQ(shapes.at("y").dims, (std::vector<int64_t>{8, 4}));
}

}  // namespace
}  // namespace braid
