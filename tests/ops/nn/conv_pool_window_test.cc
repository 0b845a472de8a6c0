// ComputeConvPoolWindow (ops/nn/conv_pool_window.h): output sizes and pads of every legacy_pad
// mode against hand-computed tables (Caffe's rounding up for CAFFE_LEGACY_POOLING), global
// pooling with the redundant arguments exported nets carry, and the argument errors.
#include "ops/nn/conv_pool_window.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/op_test_util.h"

namespace braid::test {
namespace {

// One spatial dim: X is [1, 1, in, in] with kernel k, stride s and (for NOTSET and
// CAFFE_LEGACY_POOLING) pad p at both ends.
struct SizeRow {
  int legacy_pad;
  int64_t in, k, s, p;
  int64_t out, pad_begin, pad_end;  // expected
};

OperatorDef WindowOp(const std::string& type, const SizeRow& r) {
  std::string text = "type: \"" + type + "\" input: \"X\" output: \"Y\"";
  auto add = [&text](const char* name, int64_t v) {
    text += std::string(" arg { name: \"") + name + "\" i: " + std::to_string(v) + " }";
  };
  add("kernel", r.k), add("stride", r.s);
  if (r.legacy_pad != 0) add("legacy_pad", r.legacy_pad);
  if (r.legacy_pad == 0 || r.legacy_pad == 3) add("pad", r.p);
  return ParseOp(text);
}

ShapeInfo Image(int64_t h, int64_t w) { return ShapeInfo{DType::kFloat32, {1, 1, h, w}, true}; }

void ExpectRows(const std::vector<SizeRow>& rows, WindowKind kind) {
  for (const SizeRow& r : rows) {
    SCOPED_TRACE("legacy_pad " + std::to_string(r.legacy_pad) + " in " + std::to_string(r.in) +
                 " kernel " + std::to_string(r.k) + " stride " + std::to_string(r.s) + " pad " +
                 std::to_string(r.p));
    const ConvPoolWindow w = ComputeConvPoolWindow(
        WindowOp(kind == WindowKind::kPool ? "MaxPool" : "Conv", r), Image(r.in, r.in), kind);
    EXPECT_EQ(w.output, (ConvPoolWindow::Pair{r.out, r.out}));
    EXPECT_EQ(w.pad_begin, (ConvPoolWindow::Pair{r.pad_begin, r.pad_begin}));
    EXPECT_EQ(w.pad_end, (ConvPoolWindow::Pair{r.pad_end, r.pad_end}));
  }
}

TEST(ConvPoolWindowTest, NotSetRoundsDownOverTheGivenPads) {
  ExpectRows({{0, 7, 3, 2, 1, 4, 1, 1}, {0, 6, 3, 2, 1, 3, 1, 1}, {0, 112, 3, 2, 0, 55, 0, 0}},
             WindowKind::kPool);
}

TEST(ConvPoolWindowTest, ValidUsesNoPads) {
  ExpectRows({{1, 7, 3, 2, 0, 3, 0, 0}, {1, 6, 3, 2, 0, 2, 0, 0}, {1, 224, 7, 2, 0, 109, 0, 0}},
             WindowKind::kConv);
}

// out = ceil(in / s); need = (out - 1) * s + k - in, the smaller half first.
TEST(ConvPoolWindowTest, SameKeepsCeilInOverStrideAndPadsTheEndMore) {
  ExpectRows({{2, 7, 3, 2, 0, 4, 1, 1},
              {2, 6, 3, 2, 0, 3, 0, 1},
              {2, 5, 2, 1, 0, 5, 0, 1},
              {2, 224, 7, 2, 0, 112, 2, 3},
              {2, 6, 1, 4, 0, 2, 0, 0}},  // the windows end inside the image: no pads
             WindowKind::kConv);
  ExpectRows({{2, 7, 3, 2, 0, 4, 1, 1}, {2, 5, 2, 1, 0, 5, 0, 1}}, WindowKind::kPool);
}

// Caffe: out = ceil((in + 2p - k) / s) + 1, less one when p > 0 and the last window would start
// at or past in + p. pad_end is what the last window reaches past the image.
TEST(ConvPoolWindowTest, CaffeLegacyPoolingRoundsUpAsCaffeDoes) {
  ExpectRows({{3, 55, 3, 2, 0, 27, 0, 0},   // SqueezeNet's pools: 55 -> 27, as rounding down
              {3, 112, 3, 2, 0, 56, 0, 1},  // GoogLeNet's pool1: 56 where rounding down gives 55
              {3, 56, 3, 2, 0, 28, 0, 1},   // and pool2: 28, not 27
              {3, 6, 3, 2, 1, 4, 1, 2},     // ceil(2.5) + 1 = 4, where NOTSET gives 3
              {3, 5, 3, 2, 1, 3, 1, 1},     // exact: as NOTSET
              {3, 5, 2, 2, 1, 3, 1, 0}},    // ceil gives 4, whose window would start at 6 = in + p
             WindowKind::kPool);
}

// A window starting past the image (stride 3 > kernel 1) has no input: pooling refuses it.
TEST(ConvPoolWindowTest, CaffeLegacyPoolingWindowPastTheImageIsAPoolingError) {
  const SizeRow past{3, 5, 1, 3, 0, 3, 0, 2};
  ExpectRows({past}, WindowKind::kConv);
  try {
    ComputeConvPoolWindow(WindowOp("MaxPool", past), Image(5, 5), WindowKind::kPool);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("must be smaller than the kernel (1, 1)"),
              std::string::npos)
        << e.status().message();
  }
}

TEST(ConvPoolWindowTest, ModesApplyPerDimension) {
  const OperatorDef op = ParseOp(R"(type: "AveragePool" input: "X" output: "Y"
      arg { name: "kernels" ints: [3, 2] } arg { name: "strides" ints: [2, 1] }
      arg { name: "legacy_pad" i: 2 })");
  const ConvPoolWindow w = ComputeConvPoolWindow(op, Image(6, 5), WindowKind::kPool);
  EXPECT_EQ(w.output, (ConvPoolWindow::Pair{3, 5}));
  EXPECT_EQ(w.pad_begin, (ConvPoolWindow::Pair{0, 0}));
  EXPECT_EQ(w.pad_end, (ConvPoolWindow::Pair{1, 1}));
}

// DenseNet's exported nets: global_pooling with kernel 0, stride 1, pad 0 (and legacy_pad).
TEST(ConvPoolWindowTest, GlobalPoolingAcceptsTheRedundantArgumentsOfExportedNets) {
  for (const char* extra : {"", R"(arg { name: "kernel" i: 0 } arg { name: "stride" i: 1 }
                                   arg { name: "pad" i: 0 })",
                            R"(arg { name: "kernel" i: 0 } arg { name: "legacy_pad" i: 3 })",
                            R"(arg { name: "kernels" ints: [7, 5] } arg { name: "pads"
                                   ints: [0, 0, 0, 0] } arg { name: "dilation" i: 1 })"}) {
    SCOPED_TRACE(extra);
    const OperatorDef op = ParseOp(std::string(R"(type: "AveragePool" input: "X" output: "Y"
        arg { name: "global_pooling" i: 1 } )") + extra);
    const ConvPoolWindow w = ComputeConvPoolWindow(op, Image(7, 5), WindowKind::kPool);
    EXPECT_TRUE(w.global_pooling);
    EXPECT_EQ(w.kernel, (ConvPoolWindow::Pair{7, 5}));
    EXPECT_EQ(w.output, (ConvPoolWindow::Pair{1, 1}));
    EXPECT_EQ(w.pad_begin, (ConvPoolWindow::Pair{0, 0}));
    EXPECT_EQ(w.pad_end, (ConvPoolWindow::Pair{0, 0}));
  }
}

std::string WindowError(const std::string& op_text, WindowKind kind = WindowKind::kPool) {
  try {
    ComputeConvPoolWindow(ParseOp(op_text), Image(6, 6), kind);
  } catch (const Error& e) {
    return e.status().message();
  }
  return "";
}

TEST(ConvPoolWindowTest, RejectsArgumentsCaffe2Rejects) {
  const std::string pool = R"(type: "MaxPool" input: "X" output: "Y" arg { name: "kernel" i: 3 } )";
  EXPECT_NE(WindowError(pool + R"(arg { name: "legacy_pad" i: 1 } arg { name: "pad" i: 0 })")
                .find("legacy_pad VALID (1) computes the pads itself: give no pad arguments"),
            std::string::npos);
  EXPECT_NE(WindowError(pool + R"(arg { name: "legacy_pad" i: 2 } arg { name: "pads"
                                  ints: [1, 1, 1, 1] })")
                .find("legacy_pad SAME (2) computes the pads itself"),
            std::string::npos);
  EXPECT_NE(WindowError(R"(type: "Conv" input: "X" input: "W" output: "Y"
                           arg { name: "kernel" i: 3 } arg { name: "dilation" i: 2 }
                           arg { name: "legacy_pad" i: 2 })",
                        WindowKind::kConv)
                .find("legacy_pad SAME (2) takes no dilation, got (2, 2)"),
            std::string::npos);
  EXPECT_NE(WindowError(pool + R"(arg { name: "legacy_pad" i: 3 } arg { name: "pads"
                                  ints: [1, 1, 2, 1] })")
                .find("CAFFE_LEGACY_POOLING (3) takes one pad per dim, the same at both ends"),
            std::string::npos);
  EXPECT_NE(WindowError(pool + R"(arg { name: "legacy_pad" i: 4 })")
                .find("legacy_pad 4 is not one of NOTSET=0, VALID=1, SAME=2, "
                      "CAFFE_LEGACY_POOLING=3"),
            std::string::npos);
  EXPECT_NE(WindowError(R"(type: "MaxPool" input: "X" output: "Y" arg { name: "kernel" i: 7 }
                           arg { name: "legacy_pad" i: 1 })")
                .find("does not fit X 'X' float32[1,1,6,6]"),
            std::string::npos);
  EXPECT_NE(WindowError(pool + R"(arg { name: "order" s: "NHWC" })")
                .find("MaxPool supports order 'NCHW' only: order 'NHWC' of 'Y' is not supported"),
            std::string::npos);
}

TEST(ConvPoolWindowTest, GlobalPoolingRejectsAnotherWindow) {
  const std::string global =
      R"(type: "MaxPool" input: "X" output: "Y" arg { name: "global_pooling" i: 1 } )";
  EXPECT_NE(WindowError(global + R"(arg { name: "kernel" i: 3 })")
                .find("global_pooling takes the whole image (6, 6) as the window: kernel (3, 3) "
                      "must be left out, 0 or the image size"),
            std::string::npos);
  for (const char* arg : {R"(arg { name: "stride" i: 2 })", R"(arg { name: "pad" i: 1 })",
                          R"(arg { name: "dilation" i: 2 })"}) {
    EXPECT_NE(WindowError(global + arg).find("global_pooling takes no stride, pad or dilation"),
              std::string::npos)
        << arg;
  }
}

}  // namespace
}  // namespace braid::test
