// RoIAlign and RoIAlignGradient: exact bilinear samples on a ramp image (aligned and legacy),
// samples outside the image, edge clamping, torchvision.ops.roi_align's outputs on a small batch
// (tools/detection/make_roi_align_expectations.py), numerical gradients, errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;
using ::braid::testing::GradientCheckOptions;

std::string RoIAlignOp(float scale, int ph, int pw, int sampling_ratio, int aligned) {
  return R"(type: "RoIAlign" input: "X" input: "R" output: "Y" arg { name: "spatial_scale" f: )" +
         std::to_string(scale) + R"( } arg { name: "pooled_h" i: )" + std::to_string(ph) +
         R"( } arg { name: "pooled_w" i: )" + std::to_string(pw) +
         R"( } arg { name: "sampling_ratio" i: )" + std::to_string(sampling_ratio) +
         R"( } arg { name: "aligned" i: )" + std::to_string(aligned) + " }";
}

// X[0, 0, y, x] = x + 10 y: bilinear samples inside the image are exact, so a bin's average is
// the ramp at the bin's centre.
void FeedRamp(Workspace* ws, int64_t h, int64_t w) {
  std::vector<float> x;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t c = 0; c < w; ++c) x.push_back(static_cast<float>(c + 10 * y));
  }
  Feed<float>(ws, "X", {1, 1, h, w}, x);
}

TEST(RoIAlignOpTest, AveragesBilinearSamplesAtBinCentres) {
  Workspace ws;
  FeedRamp(&ws, 5, 6);
  // aligned: [1.5, 3.5] - 0.5 = [1, 3], bins of 1 centred at 1.5 and 2.5.
  Feed<float>(&ws, "R", {1, 5}, {0, 1.5f, 1.5f, 3.5f, 3.5f});
  ASSERT_TRUE(RunOp(&ws, RoIAlignOp(1.f, 2, 2, 2, 1)));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{16.5f, 17.5f, 26.5f, 27.5f}));
  // Legacy (aligned 0): no half-pixel shift; spatial_scale 0.5 halves [2, 6] to [1, 3].
  Feed<float>(&ws, "R", {1, 4}, {2, 2, 6, 6});
  ASSERT_TRUE(RunOp(&ws, RoIAlignOp(0.5f, 2, 2, -1, 0)));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{16.5f, 17.5f, 26.5f, 27.5f}));
}

TEST(RoIAlignOpTest, LegacyModeWidensRoIsToOnePixel) {
  Workspace ws;
  FeedRamp(&ws, 5, 6);
  // A point RoI at (2, 1) is taken as [2, 3] x [1, 2]: one bin centred at (2.5, 1.5).
  Feed<float>(&ws, "R", {1, 5}, {0, 2, 1, 2, 1});
  ASSERT_TRUE(RunOp(&ws, RoIAlignOp(1.f, 1, 1, 2, 0)));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{2.5f + 15.f}));
  // aligned keeps its zero size: every sample sits at (1.5, 0.5).
  ASSERT_TRUE(RunOp(&ws, RoIAlignOp(1.f, 1, 1, 2, 1)));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{1.5f + 5.f}));
}

TEST(RoIAlignOpTest, SamplesOutsideTheImageCountAsZeroAndEdgesClamp) {
  Workspace ws;
  FeedRamp(&ws, 3, 4);
  // Samples at x = -1.5 (outside: 0) and x = -0.5 (clamped to column 0), y = 1 (row 1: 10).
  Feed<float>(&ws, "R", {1, 5}, {0, -1.5f, 1, 0.5f, 2});
  ASSERT_TRUE(RunOp(&ws, RoIAlignOp(1.f, 1, 1, 0, 1)));
  // Adaptive grid: ceil(2) x ceil(1) = 2 x 1 samples, (0 + 10) / 2.
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{5.f}));
  // Past the last row and column (within +1): clamped to row 2, column 3 (value 23).
  Feed<float>(&ws, "R", {1, 5}, {0, 3.5f, 2.5f, 4.5f, 3.5f});
  ASSERT_TRUE(RunOp(&ws, RoIAlignOp(1.f, 1, 1, 1, 1)));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{23.f}));
}

struct TorchvisionCase {
  float scale;
  int ph, pw, sampling_ratio, aligned;
  std::vector<float> expected;
};

// tools/detection/make_roi_align_expectations.py (torchvision 0.14).
const std::vector<TorchvisionCase>& TorchvisionCases() {
  static const auto* cases = new std::vector<TorchvisionCase>{
      {1.0f,
       2,
       3,
       2,
       0,
       {2.15625,
        0.46875,
        -1.21875,
        -0.1875,
        1.28125,
        -0.40625,
        0.71875,
        -0.96875,
        0.5,
        1.53125,
        -0.15625,
        1.3125,
        0.6015625,
        0.77734375,
        0.1640625,
        1.89648438,
        -1.47851562,
        1.45898438,
        -0.8359375,
        2.1015625,
        -1.2734375,
        0.458984375,
        -1.140625,
        0.021484375,
        -2.48242188,
        -2.84960985,
        1.09423828,
        0.091796875,
        -0.041015625,
        1.39664698,
        -0.2421875,
        1.82812476,
        -1.2802732,
        -0.0703125,
        -0.759765625,
        0.513508916,
        2.17708373,
        3.71875095,
        4.875,
        -0.572916269,
        0.968751013,
        2.125,
        3.10677052,
        1.49218631,
        0.28125,
        2.98697925,
        3.47656298,
        3.84375,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0}},
      {1.0f,
       2,
       3,
       -1,
       0,
       {2.15625,
        0.46875,
        -1.21875,
        -0.1875,
        1.28125,
        -0.40625,
        0.71875,
        -0.96875,
        0.5,
        1.53125,
        -0.15625,
        1.3125,
        0.6015625,
        0.77734375,
        0.1640625,
        1.89648438,
        -1.47851562,
        1.45898438,
        -0.8359375,
        2.1015625,
        -1.2734375,
        0.458984375,
        -1.140625,
        0.021484375,
        -0.803125024,
        -0.734687686,
        0.531901002,
        0.519687712,
        -0.0349998958,
        1.35484338,
        0.168437406,
        0.861249804,
        -0.44713527,
        -0.479687691,
        -0.897500038,
        0.965781391,
        2.17708278,
        3.71875,
        4.875,
        -0.572917461,
        0.96875,
        2.125,
        3.10677171,
        1.4921875,
        0.28125,
        2.98697901,
        3.4765625,
        3.84375,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0}},
      {0.5f,
       3,
       2,
       0,
       1,
       {-3.078125,
        0.127604246,
        -0.703125,
        1.9765625,
        1.67187524,
        3.82552099,
        1.0078125,
        1.84635401,
        1.8046875,
        0.5390625,
        2.60156274,
        -0.768229246,
        0.494791657,
        -2.49674463,
        0.968749821,
        -1.56250024,
        1.44270825,
        -0.430989474,
        -0.942708492,
        0.0110678077,
        -0.468750119,
        -1.81640601,
        0.00520831347,
        -2.9863286,
        -3,
        -4.265625,
        -0.636067629,
        0.462239683,
        0.00716137886,
        -1.1116538,
        -0.5625,
        0.609375,
        1.80143237,
        2.47688794,
        -1.36914039,
        -1.25048816,
        1.09765625,
        1.38671875,
        1.09765625,
        1.38671875,
        1.09765625,
        1.38671875,
        4,
        3.5,
        4,
        3.5,
        4,
        3.5,
        0.908854246,
        1.85156238,
        4.48697901,
        0.169270456,
        -1.66666639,
        2.95833349,
        2.1015625,
        -2.21614575,
        0.419270456,
        1.36197937,
        3.20833349,
        0.468749762}},
      {0.5f,
       2,
       2,
       3,
       1,
       {-2.484375,
        0.458333284,
        1.07812476,
        2.96874976,
        1.20703125,
        1.2565105,
        2.40234399,
        -0.178385317,
        0.61328125,
        -2.35633683,
        1.32421875,
        -0.607928157,
        -0.824218631,
        -0.462239593,
        -0.11328122,
        -2.79065418,
        -2.84548616,
        -2.46961856,
        -0.380208224,
        -0.749228477,
        0.404513896,
        1.21204662,
        -0.52025485,
        0.0635607392,
        1.09765625,
        1.38671875,
        1.09765625,
        1.38671875,
        4,
        3.5,
        4,
        3.5,
        1.82773888,
        0.892746806,
        0.112847008,
        2.33410454,
        0.974729776,
        -0.408371806,
        2.29918957,
        0.604359865}},
  };
  return *cases;
}

void FeedTorchvisionInputs(Workspace* ws) {
  std::vector<float> x(2 * 2 * 6 * 7);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.125f - 6;
  Feed<float>(ws, "X", {2, 2, 6, 7}, x);
  Feed<float>(ws, "R", {5, 5},
              {0,    1.0f, 1.0f, 4.0f,  3.0f, 1,    0.5f, 2.25f, 6.5f,  5.75f, 0,     -2.0f, -1.5f,
               3.0f, 8.0f, 1,    5.25f, 0.0f, 5.5f, 0.5f, 0,     10.0f, 2.0f,  14.0f, 9.0f});
}

TEST(RoIAlignOpTest, MatchesTorchvision) {
  for (const TorchvisionCase& c : TorchvisionCases()) {
    const std::string op = RoIAlignOp(c.scale, c.ph, c.pw, c.sampling_ratio, c.aligned);
    SCOPED_TRACE(op);
    Workspace ws;
    FeedTorchvisionInputs(&ws);
    ASSERT_TRUE(RunOp(&ws, op));
    ASSERT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{5, 2, c.ph, c.pw}));
    const std::vector<float> y = Fetch<float>(ws, "Y");
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], c.expected[i], 2e-5f) << "at " << i;
  }
}

TEST(RoIAlignOpTest, GradientMatchesFiniteDifferences) {
  GradientCheckOptions options;
  options.inputs = {0};
  for (const TorchvisionCase& c : TorchvisionCases()) {
    const std::string op = RoIAlignOp(c.scale, c.ph, c.pw, c.sampling_ratio, c.aligned);
    SCOPED_TRACE(op);
    Workspace ws;
    FeedTorchvisionInputs(&ws);
    EXPECT_TRUE(CheckGradient(ParseOp(op), &ws, options));
  }
}

TEST(RoIAlignOpTest, GradientSpreadsOverTheFourPixels) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 2, 2}, {0, 0, 0, 0});
  Feed<float>(&ws, "R", {1, 5}, {0, 0, 0.25f, 1, 0.25f});
  Feed<float>(&ws, "dY", {1, 1, 1, 1}, {8});
  ASSERT_TRUE(RunOp(&ws, R"(type: "RoIAlignGradient" input: "X" input: "R" input: "dY"
      output: "dX" arg { name: "sampling_ratio" i: 1 } arg { name: "aligned" i: 0 })"));
  // Legacy: height max(0, 1) = 1, so the one sample is at y = 0.75, x = 0.5: weights
  // 0.25 * 0.5 on row 0's two pixels, 0.75 * 0.5 on row 1's; dY 8 / 1 sample.
  EXPECT_EQ(Fetch<float>(ws, "dX"), (std::vector<float>{1, 1, 3, 3}));
}

TEST(RoIAlignOpTest, BadArgumentsAndInputsAreNamed) {
  Workspace ws;
  FeedRamp(&ws, 3, 4);
  Feed<float>(&ws, "R", {1, 5}, {0, 0, 0, 2, 2});
  Feed<float>(&ws, "R3", {1, 3}, {0, 0, 0});
  Feed<float>(&ws, "Rbad", {1, 5}, {1, 0, 0, 2, 2});
  Feed<float>(&ws, "Rfrac", {1, 5}, {0.5f, 0, 0, 2, 2});
  Feed<float>(&ws, "Rinf", {1, 5}, {0, 0, 0, 1.f / 0.f, 2});
  Feed<float>(&ws, "Rneg", {1, 5}, {0, 2, 0, 1, 2});
  Feed<float>(&ws, "X2", {2, 1, 3, 4}, std::vector<float>(24));
  const std::string base = R"(type: "RoIAlign" input: "X" input: "R" output: "Y" )";
  ExpectInferAndRunFail(&ws, base + R"(arg { name: "order" s: "NHWC" })",
                        "RoIAlign: order 'NHWC' is not");
  ExpectInferAndRunFail(&ws, base + R"(arg { name: "pooled_h" i: 0 })",
                        "pooled_h 0 and pooled_w 1 must be >= 1");
  ExpectInferAndRunFail(&ws, base + R"(arg { name: "spatial_scale" f: 0 })",
                        "spatial_scale 0.000000 must be");
  ExpectInferAndRunFail(&ws, base + R"(arg { name: "sampling_ratio" i: -2 })",
                        "sampling_ratio -2 must be");
  ExpectInferAndRunFail(&ws, base + R"(arg { name: "aligned" i: 2 })", "aligned 2 must be 0 or 1");
  ExpectInferAndRunFail(&ws, R"(type: "RoIAlign" input: "X" input: "R3" output: "Y")",
                        "RoIs 'R3' float32[1,3] must be float32 (R, 5)");
  ExpectInferAndRunFail(&ws, R"(type: "RoIAlign" input: "X2" input: "R3" output: "Y")",
                        "when X 'X2'");
  ExpectRunFails(&ws, R"(type: "RoIAlign" input: "X" input: "Rbad" output: "Y")",
                 "RoIs 'Rbad' row 0 has batch index 1.000000; X holds images 0..0");
  ExpectRunFails(&ws, R"(type: "RoIAlign" input: "X" input: "Rfrac" output: "Y")",
                 "batch index 0.5");
  ExpectRunFails(&ws, R"(type: "RoIAlign" input: "X" input: "Rinf" output: "Y")", "non-finite");
  ExpectRunFails(
      &ws, R"(type: "RoIAlign" input: "X" input: "Rneg" output: "Y" arg { name: "aligned" i: 1 })",
      "x2 < x1");
  Feed<float>(&ws, "dY", {1, 1, 2, 2}, std::vector<float>(4));
  ExpectInferAndRunFail(
      &ws, R"(type: "RoIAlignGradient" input: "X" input: "R" input: "dY" output: "dX")",
      "dY 'dY' float32[1,1,2,2] must be float32[1,1,1,1]");
}

}  // namespace
}  // namespace braid::test
