// Conv and ConvGradient ask the process-wide AlgorithmRegistry (ops/nn/conv_algorithm.h): one
// search per new shape and direction, none for the same shape on another device, the rule mode
// without timing, and what a ResNet-20 layer's search costs and picks on this machine.
#include "ops/nn/conv_algorithm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <google/protobuf/text_format.h>

#include "ops/op_test_util.h"
#include "runtime/core/workspace.h"
#include "runtime/device/algorithm_registry.h"
#include "runtime/exec/net.h"

namespace braid::test {
namespace {

std::string On(const std::string& device) {
  if (device == "cpu") return "";
  return " device_option { device_type: 1000 device_id: " + device.substr(4) + " } ";
}

std::string Shape(const std::vector<int64_t>& dims) {
  std::string out;
  for (int64_t d : dims) out += " ints: " + std::to_string(d);
  return out;
}

// A net on `device` ("cpu", "sim:0", ...) that fills X and W and runs Conv (pad 1) and, when
// `backward`, ConvGradient with dY = Y.
NetDef ConvNet(const std::string& device, const std::vector<int64_t>& x,
               const std::vector<int64_t>& w, bool backward) {
  const std::string dev = On(device);
  std::string text = "name: \"conv_" + device.substr(0, 3) + "\" ";
  text += "op { type: \"GaussianFill\" output: \"X\" arg { name: \"shape\"" + Shape(x) +
          " } arg { name: \"seed\" i: 1 }" + dev + "}";
  text += "op { type: \"GaussianFill\" output: \"W\" arg { name: \"shape\"" + Shape(w) +
          " } arg { name: \"seed\" i: 2 }" + dev + "}";
  text += "op { type: \"Conv\" input: \"X\" input: \"W\" output: \"Y\" arg { name: \"pad\" i: 1 }" +
          dev + "}";
  if (backward) {
    text += "op { type: \"ConvGradient\" input: \"X\" input: \"W\" input: \"Y\" output: \"dW\" "
            "output: \"dX\" arg { name: \"no_bias\" i: 1 } arg { name: \"pad\" i: 1 }" +
            dev + "}";
  }
  NetDef net;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net)) << text;
  return net;
}

// The registry's entries for Conv of X `x` (any direction).
std::map<std::string, AlgorithmChoice> ConvEntries(const std::vector<int64_t>& x,
                                                   const std::vector<int64_t>& w) {
  std::string dims = "|x=", filter = "|w=";
  for (size_t i = 0; i < x.size(); ++i) dims += (i ? "," : "") + std::to_string(x[i]);
  for (size_t i = 0; i < w.size(); ++i) filter += (i ? "," : "") + std::to_string(w[i]);
  std::map<std::string, AlgorithmChoice> out;
  for (const auto& [key, choice] : AlgorithmRegistry::Global().Entries()) {
    if (key.rfind("Conv/", 0) == 0 && key.find(dims + filter + "|") != std::string::npos) {
      out.emplace(key, choice);
    }
  }
  return out;
}

void RunNet(const NetDef& def) {
  Workspace ws;
  const Status status = ws.RunNetOnce(def);
  ASSERT_TRUE(status.ok()) << status.ToString();
}

TEST(ConvAlgorithmTest, AConvSearchesOnceForANewShapeAndNotAgainOnAnotherDevice) {
  const std::vector<int64_t> x{2, 16, 11, 9}, w{16, 16, 3, 3};  // a shape no other test uses
  const int64_t before = AlgorithmRegistry::Global().searches();
  RunNet(ConvNet("sim:0", x, w, false));
  EXPECT_EQ(AlgorithmRegistry::Global().searches(), before + 1);
  RunNet(ConvNet("sim:1", x, w, false));
  RunNet(ConvNet("cpu", x, w, false));
  EXPECT_EQ(AlgorithmRegistry::Global().searches(), before + 1);
  const std::map<std::string, AlgorithmChoice> entries = ConvEntries(x, w);
  ASSERT_EQ(entries.size(), 1u);
  const auto& [key, choice] = *entries.begin();
  EXPECT_EQ(key.rfind("Conv/forward|onednn-cpu|isa=", 0), 0u) << key;
  EXPECT_TRUE(choice.algorithm == "winograd" || choice.algorithm == "direct") << choice.algorithm;
  std::printf("%s -> %s (%lld workspace bytes)\n", key.c_str(), choice.algorithm.c_str(),
              static_cast<long long>(choice.workspace_bytes));
}

TEST(ConvAlgorithmTest, ConvGradientSearchesEachBackwardDirectionOnceWithTheForwardAsHint) {
  const std::vector<int64_t> x{2, 16, 7, 13}, w{32, 16, 3, 3};
  const int64_t before = AlgorithmRegistry::Global().searches();
  RunNet(ConvNet("sim:0", x, w, true));
  EXPECT_EQ(AlgorithmRegistry::Global().searches(), before + 3);  // forward, dW, dX
  RunNet(ConvNet("sim:1", x, w, true));
  EXPECT_EQ(AlgorithmRegistry::Global().searches(), before + 3);
  const std::map<std::string, AlgorithmChoice> entries = ConvEntries(x, w);
  ASSERT_EQ(entries.size(), 3u);
  std::string forward;
  for (const auto& [key, choice] : entries) {
    if (key.rfind("Conv/forward|", 0) == 0) forward = choice.algorithm;
  }
  for (const auto& [key, choice] : entries) {
    if (key.rfind("Conv/forward|", 0) == 0) continue;
    EXPECT_NE(key.find("|hint=" + forward), std::string::npos) << key;
  }
}

TEST(ConvAlgorithmTest, AShapeWithoutAWinogradCandidateIsDirectWithoutTiming) {
  const std::vector<int64_t> x{2, 8, 9, 9}, w{8, 8, 3, 3};  // under 16 channels: not eligible
  RunNet(ConvNet("cpu", x, w, false));
  const std::map<std::string, AlgorithmChoice> entries = ConvEntries(x, w);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries.begin()->second.algorithm, "direct");
}

TEST(ConvAlgorithmTest, TheRuleModeChoosesWinogradWhereEligibleAndBuilt) {
  AlgorithmRegistry& registry = AlgorithmRegistry::Global();
  const SearchMode mode = registry.mode();
  registry.set_mode(SearchMode::kRule);
  const std::vector<int64_t> x{2, 16, 10, 11}, w{16, 16, 3, 3};
  RunNet(ConvNet("cpu", x, w, false));
  registry.set_mode(mode);
  const std::map<std::string, AlgorithmChoice> entries = ConvEntries(x, w);
  ASSERT_EQ(entries.size(), 1u);
  // oneDNN has Winograd kernels on AVX-512 only (the key names the ISA).
  if (entries.begin()->first.find("|isa=avx512") != std::string::npos) {
    EXPECT_EQ(entries.begin()->second.algorithm, "winograd");
  }
}

// Inception-v3's 147x147 layer at batch 8: Winograd's scratchpad for the whole batch is 82 MB, so
// the op searches (and runs) at the largest chunk of samples where every candidate's scratchpad
// fits beside the chunk's blocked X and Y in kChunkScratchBytes (at 1 sample when none does): a
// search allocates no more than the op may hold.
TEST(ConvAlgorithmTest, ALargeBatchIsSearchedAtTheLargestChunkWhereEveryScratchpadFits) {
  const std::vector<int64_t> x{8, 32, 147, 147}, w{64, 32, 3, 3};
  RunNet(ConvNet("cpu", x, w, false));
  int64_t chunk = 0;
  for (const auto& [key, choice] : AlgorithmRegistry::Global().Entries()) {
    if (key.rfind("Conv/forward|", 0) != 0 ||
        key.find(",32,147,147|w=64,32,3,3|") == std::string::npos) {
      continue;
    }
    chunk = std::max<int64_t>(chunk, std::stoll(key.substr(key.find("|x=") + 3)));
  }
  ASSERT_GT(chunk, 0) << "no forward search for the layer";
  OperatorDef conv;
  conv.set_type("Conv");
  Argument* pad = conv.add_arg();
  pad->set_name("pad");
  pad->set_i(1);
  const auto fits = [&](int64_t samples) {
    const ConvShapes s = ComputeConvShapes(
        conv, {{DType::kFloat32, {samples, 32, 147, 147}, true}, {DType::kFloat32, w, true}});
    const int64_t bytes = samples * (32 + 64) * 147 * 147 * 4 + LargestForwardScratchpadBytes(s);
    std::printf("  chunk %lld: blocked X and Y + largest scratchpad %.1f MB\n",
                static_cast<long long>(samples), bytes / 1e6);
    return bytes <= kChunkScratchBytes;
  };
  EXPECT_TRUE(chunk == 1 || fits(chunk)) << "chunk " << chunk;
  for (int64_t larger = chunk + 1; larger <= x[0]; ++larger) {
    if (x[0] % larger == 0) {
      EXPECT_FALSE(fits(larger)) << "chunk " << larger << " fits too";
    }
  }
  std::printf("8x32x147x147 -> 64 3x3 filters: searched at chunk %lld\n",
              static_cast<long long>(chunk));
}

// A ResNet-20 stage-1 layer (64x16x28x28, 16 3x3 filters, pad 1): what its three searches cost
// and pick here. Prints only; the choice may differ from run to run when the two are close.
TEST(ConvAlgorithmTest, ResNet20LayerSearchCostAndChoice) {
  const std::vector<int64_t> x{64, 16, 28, 28}, w{16, 16, 3, 3};
  const auto start = std::chrono::steady_clock::now();
  RunNet(ConvNet("cpu", x, w, true));
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  std::printf("ResNet-20 layer 64x16x28x28: first forward + backward with searches %.1f ms\n",
              elapsed.count());
  const auto again = std::chrono::steady_clock::now();
  RunNet(ConvNet("cpu", x, w, true));
  const std::chrono::duration<double, std::milli> cached =
      std::chrono::steady_clock::now() - again;
  std::printf("  the same with the choices cached: %.1f ms\n", cached.count());
  for (const auto& [key, choice] : ConvEntries(x, w)) {
    std::printf("  %s -> %s\n", key.substr(0, key.find('|')).c_str(), choice.algorithm.c_str());
  }
}

}  // namespace
}  // namespace braid::test
