// A Faster R-CNN in the layout Detectron exports to Caffe2 (tests/data/faster_rcnn, written by
// tools/detection/make_faster_rcnn_fixture.py): backbone, RPN, GenerateProposals, RoIAlign, box
// head, BBoxTransform and BoxWithNMSLimit, fed data and im_info. braid_run's outputs must match the
// independent implementation's (PyTorch, torchvision.ops.roi_align and numpy loops of the box ops)
// on the committed inputs, with each executor and with the memory plan.
//
// Tolerance: max |braid - expected| <= 1e-4 * max |expected| per output; the classes exactly (the
// fixture's script checks that every discrete decision clears a margin, so rounding cannot flip
// one).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing/npy_compare.h"
#include "testing/run_command.h"
#include "testing/test_paths.h"

namespace braid {
namespace {

using braid::testing::BraidBinary;
using braid::testing::ExpectNpyClose;
using braid::testing::RunCommand;
using braid::testing::TestData;

constexpr double kRelativeTolerance = 1e-4;

class FasterRcnnTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FasterRcnnTest, DetectionsMatchTheIndependentImplementation) {
  const std::string fixture = TestData(BRAID_FASTER_RCNN_FIXTURE, "tests/data/faster_rcnn");
  const std::string out = ::testing::TempDir() + "/faster_rcnn_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(out);
  const auto r = RunCommand(BraidBinary(BRAID_RUN_BINARY) + " --model-dir " + fixture +
                            " --input data=" + fixture + "/data.npy --input im_info=" + fixture +
                            "/im_info.npy --save-outputs " + out + " " + GetParam());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"rpn_rois", "rpn_roi_probs", "score_nms", "bbox_nms"}) {
    ExpectNpyClose(out + "/" + name + ".npy", fixture + "/" + name + ".npy",
                   std::string(name) + " " + GetParam(), kRelativeTolerance);
  }
  ExpectNpyClose(out + "/class_nms.npy", fixture + "/class_nms.npy", "class_nms " + GetParam(), 0);
}

INSTANTIATE_TEST_SUITE_P(Executors, FasterRcnnTest,
                         ::testing::Values("", "--executor simple", "--threads 2 --memory-plan on"),
                         [](const auto& info) {
                           return info.index == 0   ? std::string("AsExported")
                                  : info.index == 1 ? std::string("Simple")
                                                    : std::string("DagWithMemoryPlan");
                         });

}  // namespace
}  // namespace braid
