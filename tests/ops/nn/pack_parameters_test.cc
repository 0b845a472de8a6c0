// PackParameters (runtime/models/pack_parameters.h) with Conv's packed filter (ops/nn/conv_op.h):
// which parameters an inference net's loader packs, and that a Conv reading a packed filter
// computes exactly what it computes from the plain one.
#include "runtime/models/pack_parameters.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "ops/nn/dnnl_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/tensor.h"
#include "runtime/core/workspace.h"

namespace braid::test {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Feeds X [2, c, 9, 9] and, per name, a filter [m, c, 3, 3] and a bias [m].
void FeedConvBlobs(Workspace* ws, int64_t c, int64_t m, const std::vector<std::string>& filters) {
  Feed<float>(ws, "X", {2, c, 9, 9}, Random(2 * c * 81, 1));
  uint32_t seed = 2;
  for (const std::string& w : filters) {
    Feed<float>(ws, w, {m, c, 3, 3}, Random(m * c * 9, seed++));
    Feed<float>(ws, w + "_b", {m}, Random(m, seed++));
  }
}

std::string Conv(const std::string& w, const std::string& y, const std::string& extra = "") {
  return "type: 'Conv' input: 'X' input: '" + w + "' input: '" + w + "_b' output: '" + y +
         "' arg { name: 'pad' i: 1 } " + extra;
}

std::vector<float> RunAndFetch(Workspace* ws, const NetDef& net, const std::string& y) {
  const Status status = ws->RunNetOnce(net);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return Fetch<float>(*ws, y);
}

// The filter layout this CPU's direct convolution reads: OIhw16i16o on AVX-512, OIhw8i8o on AVX2.
// Only where oneDNN blocks no layout at all (an SSE-only CPU) is nothing packed, and the tests that
// need packing skip, saying why.
Layout PackedLayout() { return FilterBlockedLayout(NativeChannelBlock()); }

constexpr char kWhyNothingIsPacked[] =
    "oneDNN's convolutions on this CPU choose no channel-blocked layout (NativeChannelBlock() is "
    "0: neither AVX-512's 16-channel nor AVX2's 8-channel blocks), so PackParameters packs "
    "nothing, "
    "as it should";

TEST(PackParametersTest, PacksOnEveryCpuWhoseConvolutionsBlockChannels) {
  if (NativeChannelBlock() == 0) GTEST_SKIP() << kWhyNothingIsPacked;
  Workspace ws;
  FeedConvBlobs(&ws, 16, 16, {"W"});
  EXPECT_EQ(PackParameters(NetOf({Conv("W", "Y")}), {"W", "W_b"}, &ws),
            std::vector<std::string>{"W"});
  EXPECT_EQ(ws.GetBlob("W")->layout(), PackedLayout());
}

TEST(PackParametersTest, AConvReadsItsPackedFilterAndComputesExactlyWhatItDidPlain) {
  if (NativeChannelBlock() == 0) GTEST_SKIP() << kWhyNothingIsPacked;
  const std::string block = std::to_string(NativeChannelBlock());
  for (const std::string& blocked :
       {std::string(), "arg { name: 'blocked_outputs' ints: 0 } arg { name: 'channel_block' i: " +
                           block + " }"}) {
    Workspace ws;
    FeedConvBlobs(&ws, 32, 48, {"W"});
    // Stride 2: Winograd never qualifies, so both runs time only the direct convolution. (The
    // filter's layout is part of the algorithm search's key: at stride 1 the plain and the packed
    // run search apart and, timings being noise, may pick different algorithms and bits.)
    // A 1x1 max pool reads Y in either layout and writes R plain: the identity.
    NetDef net = NetOf({Conv("W", "Y", "arg { name: 'stride' i: 2 } " + blocked),
                        "type: 'MaxPool' input: 'Y' output: 'R' arg { name: 'kernel' i: 1 }"});
    net.add_external_output("R");
    const std::vector<float> plain = RunAndFetch(&ws, net, "R");
    EXPECT_EQ(PackParameters(net, {"W", "W_b"}, &ws), std::vector<std::string>{"W"});
    EXPECT_EQ(ws.GetBlob("W")->layout(), PackedLayout());
    EXPECT_EQ(ws.GetBlob("W_b")->layout(), Layout::kPlain);  // a bias is read plain
    EXPECT_EQ(RunAndFetch(&ws, net, "R"), plain) << blocked;
    // Read plain, the packed filter is an error, not other numbers.
    EXPECT_THROW(ws.GetBlob("W")->data<float>(), Error);
  }
}

TEST(PackParametersTest, OnlyFiltersEveryReaderOfWhichIsAConvAreEverPacked) {
  if (NativeChannelBlock() == 0) GTEST_SKIP() << kWhyNothingIsPacked;
  Workspace ws;
  FeedConvBlobs(&ws, 16, 32, {"Shared", "AlsoRelu", "Written", "Output", "NotAParam"});
  Feed<float>(&ws, "G", {32, 4, 3, 3}, Random(32 * 4 * 9, 9));
  Feed<float>(&ws, "G_b", {32}, Random(32, 10));
  Feed<float>(&ws, "Narrow", {32, 3, 3, 3}, Random(32 * 27, 11));
  Feed<float>(&ws, "Narrow_b", {32}, Random(32, 12));
  Feed<float>(&ws, "X3", {2, 3, 9, 9}, Random(2 * 27 * 9, 13));
  NetDef net = NetOf({
      Conv("Shared", "Y1"), Conv("Shared", "Y2"),                       // two Convs: packed
      Conv("AlsoRelu", "Y3"), "type: 'Relu' input: 'AlsoRelu' output: 'R3'",  // read elsewhere
      "type: 'Relu' input: 'Y1' output: 'Written'", Conv("Written", "Y4"),    // written
      Conv("Output", "Y5"),                                             // fetched by the caller
      Conv("NotAParam", "Y6"),                                          // not a parameter
      "type: 'Conv' input: 'X' input: 'G' input: 'G_b' output: 'Y7' arg { name: 'pad' i: 1 } "
      "arg { name: 'group' i: 4 }",                                     // grouped
      "type: 'Conv' input: 'X3' input: 'Narrow' input: 'Narrow_b' output: 'Y8' "
      "arg { name: 'pad' i: 1 }",                                       // C = 3
  });
  net.add_external_output("Output");
  const std::set<std::string> parameters{"Shared", "AlsoRelu", "Written", "Output", "G",
                                         "Narrow", "Shared_b"};
  EXPECT_EQ(PackParameters(net, parameters, &ws), std::vector<std::string>{"Shared"});
  for (const char* blob : {"AlsoRelu", "Written", "Output", "NotAParam", "G", "Narrow"}) {
    EXPECT_EQ(ws.GetBlob(blob)->layout(), Layout::kPlain) << blob;
  }
}

TEST(PackParametersTest, AFilterWrittenAfterPackingIsReadPlainAgain) {
  if (NativeChannelBlock() == 0) GTEST_SKIP() << kWhyNothingIsPacked;
  Workspace ws;
  FeedConvBlobs(&ws, 16, 16, {"W"});
  const NetDef net = NetOf({Conv("W", "Y")});
  ASSERT_EQ(PackParameters(net, {"W"}, &ws).size(), 1u);
  RunAndFetch(&ws, net, "Y");
  // A new value, written plain (every write makes a tensor plain): the op prepares for it again.
  const std::vector<float> w = Random(16 * 16 * 9, 77);
  Feed<float>(&ws, "W", {16, 16, 3, 3}, w);
  const std::vector<float> packed_then_plain = RunAndFetch(&ws, net, "Y");
  Workspace fresh;
  FeedConvBlobs(&fresh, 16, 16, {"W"});
  Feed<float>(&fresh, "W", {16, 16, 3, 3}, w);
  EXPECT_EQ(packed_then_plain, RunAndFetch(&fresh, net, "Y"));
}

TEST(PackParametersTest, AGradientOfAPackedFilterIsRefusedNamingTheLayout) {
  if (NativeChannelBlock() == 0) GTEST_SKIP() << kWhyNothingIsPacked;
  Workspace ws;
  FeedConvBlobs(&ws, 16, 16, {"W"});
  ASSERT_EQ(PackParameters(NetOf({Conv("W", "Y")}), {"W"}, &ws).size(), 1u);
  Feed<float>(&ws, "dY", {2, 16, 9, 9}, Random(2 * 16 * 81, 5));
  ExpectRunFails(&ws,
                 "type: 'ConvGradient' input: 'X' input: 'W' input: 'dY' output: 'dW' "
                 "output: 'db' output: 'dX' arg { name: 'pad' i: 1 }",
                 LayoutName(PackedLayout()));
}

TEST(PackParametersTest, TensorsRefuseTheFilterLayoutForOtherShapes) {
  Tensor t(DType::kFloat32, {16, 24, 3, 3});
  t.mutable_data<float>();
  EXPECT_THROW(t.set_layout(Layout::kFilterBlocked16), Error);  // 24 input channels
  t.set_layout(Layout::kFilterBlocked8);                         // 24 = 3 blocks of 8
  EXPECT_STREQ(LayoutName(t.layout()), "filter_blocked8");
  Tensor twelve(DType::kFloat32, {12, 16, 3, 3});
  twelve.mutable_data<float>();
  EXPECT_THROW(twelve.set_layout(Layout::kFilterBlocked8), Error);  // 12 filters
  Tensor ok(DType::kFloat32, {32, 16, 1, 1});
  ok.mutable_data<float>();
  ok.set_layout(Layout::kFilterBlocked16);
  EXPECT_STREQ(LayoutName(ok.layout()), "filter_blocked16");
}

}  // namespace
}  // namespace braid::test
