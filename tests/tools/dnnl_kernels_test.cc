// Which oneDNN kernels a ResNet-18 step runs on this CPU (DnnlExecutionCounts, ops/nn/dnnl_util.h):
// with the activations blocked by the machine's block (NativeChannelBlock: 16 on AVX-512, 8 on
// AVX2), no step runs oneDNN's reference ("ref:") code, and a step reorders only where a tensor
// crosses between the blocked ops and the plain ones (the data, the parameters and their
// gradients, the classifier), not around every convolution's activations. ctest runs this suite
// twice: on the machine's own ISA and with ONEDNN_MAX_CPU_ISA=AVX2 (tests/tools/CMakeLists.txt).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ops/nn/dnnl_util.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "runtime/models/blocked_layouts.h"
#include "runtime/models/model_builder.h"
#include "runtime/models/optimize_inference.h"
#include "runtime/models/pack_parameters.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_nets.h"
#include "tests/tools/small_resnet.h"

namespace braid {
namespace {

// ResNet-18 (ImageNet style) on 32x32 RGB synthetic images, batch 4: every layer kind of the
// full-size net (7x7/2 conv, 3x3/2 max pool, basic blocks with projections, global pooling).
TrainingNets ResNet18() {
  return BuildTrainingNets(
      SyntheticResNetSpec("resnet18", "resnet18", {4, 3, 32, 10, /*examples=*/8}, 0.01f));
}

// Executions of each kernel during one run of `net` (after a first run that prepared it).
std::map<std::string, int64_t> KernelsOfASteadyRun(Net* net) {
  const Status first = net->Run();
  EXPECT_TRUE(first.ok()) << first.message();
  const std::map<std::string, int64_t> before = DnnlExecutionCounts();
  const Status second = net->Run();
  EXPECT_TRUE(second.ok()) << second.message();
  std::map<std::string, int64_t> ran;
  for (const auto& [kernel, count] : DnnlExecutionCounts()) {
    const auto it = before.find(kernel);
    const int64_t delta = count - (it == before.end() ? 0 : it->second);
    if (delta > 0) ran[kernel] = delta;
  }
  return ran;
}

std::string Describe(const std::map<std::string, int64_t>& kernels) {
  std::string s;
  for (const auto& [kernel, count] : kernels)
    s += "  " + kernel + " x" + std::to_string(count) + "\n";
  return s;
}

void ExpectNoReferenceKernel(const std::map<std::string, int64_t>& kernels) {
  for (const auto& [kernel, count] : kernels) {
    EXPECT_EQ(kernel.find(" ref:"), std::string::npos)
        << kernel << " ran " << count << " times: oneDNN's reference code, on the "
        << NativeChannelBlock() << "-channel block\n"
        << Describe(kernels);
  }
}

int64_t Reorders(const std::map<std::string, int64_t>& kernels) {
  int64_t n = 0;
  for (const auto& [kernel, count] : kernels) n += kernel.rfind("reorder ", 0) == 0 ? count : 0;
  return n;
}

constexpr char kWhyNoBlock[] =
    "oneDNN's convolutions on this CPU choose no channel-blocked layout (NativeChannelBlock() is "
    "0), so nets stay plain and oneDNN reorders around every convolution, as it must";

TEST(DnnlKernelsTest, ATrainingStepRunsNoReferenceKernelAndReordersOnlyAtLayoutBoundaries) {
  if (NativeChannelBlock() == 0) GTEST_SKIP() << kWhyNoBlock;
  const TrainingNets nets = ResNet18();
  Workspace ws;
  ASSERT_TRUE(ws.RunNetOnce(nets.params.init_net).ok());
  Net* train = ws.CreateNet(nets.train);
  const std::map<std::string, int64_t> kernels = KernelsOfASteadyRun(train);
  ExpectNoReferenceKernel(kernels);
  // Parameters stay plain in training (the optimizer updates them), so each Conv reorders its
  // filter into its forward and backward-data primitives and its filter gradient out: three per
  // Conv. Beyond those, only the net's edges (the images in, a plain-layout convolution such as
  // the 3-channel first layer where oneDNN has no blocked kernel, the classifier) reorder.
  // Activations blocked by another block than the kernels' would add two to four per Conv.
  const int convs = CountOps(nets.train, "Conv");
  ASSERT_GT(convs, 15);
  EXPECT_LE(Reorders(kernels), 3 * convs + 12) << Describe(kernels);
}

TEST(DnnlKernelsTest, AnInferenceStepRunsNoReferenceKernelAndReordersOnlyAtLayoutBoundaries) {
  if (NativeChannelBlock() == 0) GTEST_SKIP() << kWhyNoBlock;
  const TrainingNets nets = ResNet18();
  Workspace ws;
  ASSERT_TRUE(ws.RunNetOnce(nets.params.init_net).ok());
  Workspace test_ws(&ws);
  Net* test = test_ws.CreateNet(nets.test);
  const std::map<std::string, int64_t> kernels = KernelsOfASteadyRun(test);
  ExpectNoReferenceKernel(kernels);
  // One reorder per Conv for its plain filter (an inference net's loader packs them instead,
  // runtime/models/pack_parameters.h), plus the edges.
  const int convs = CountOps(nets.test, "Conv");
  EXPECT_LE(Reorders(kernels), convs + 6) << Describe(kernels);
}

// As the Predictor loads a net: batch norms folded, residual Sums and Relus fused into the Convs'
// primitives (binary and eltwise post-ops), filters packed. The fused kernels are JIT ones too,
// and only the edges reorder: the images, the 3-channel first filter, the classifier.
TEST(DnnlKernelsTest, AnOptimizedInferenceStepRunsNoReferenceKernelAndReordersOnlyAtItsEdges) {
  if (NativeChannelBlock() == 0) GTEST_SKIP() << kWhyNoBlock;
  TrainingNets nets = ResNet18();
  Workspace ws;
  ASSERT_TRUE(ws.RunNetOnce(nets.params.init_net).ok());
  const std::vector<std::string> names = ws.LocalBlobNames();
  const std::set<std::string> parameters(names.begin(), names.end());
  const InferenceRewrites done = OptimizeInferenceNet(&nets.test, parameters, &ws);
  EXPECT_EQ(done.folded_batch_norms, 20);  // 17 Convs and 3 projections
  EXPECT_EQ(done.fused_sums, 8);           // one per basic block
  EXPECT_EQ(done.fused_activations, 17);   // the stem's, two per block
  EXPECT_EQ(CountOps(nets.test, "Sum"), 0);
  Workspace test_ws(&ws);
  ASSERT_GT(UseBlockedLayouts(&nets.test, InferBlobShapes(nets.params.init_net, {})), 0);
  PackParameters(nets.test, parameters, &ws);
  Net* test = test_ws.CreateNet(nets.test);
  const std::map<std::string, int64_t> kernels = KernelsOfASteadyRun(test);
  ExpectNoReferenceKernel(kernels);
  EXPECT_LE(Reorders(kernels), 6) << Describe(kernels);
}

}  // namespace
}  // namespace braid
