// Scratch areas: growth, per-thread installation, and how nets hand one area to each worker so
// that ops running at once never share one and nothing grows after the first Run.
#include "runtime/exec/scratch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>

#include "braid/status.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "testing/net_text.h"
#include "testing/sanitizers.h"
#include "testing/test_ops.h"

namespace braid {
namespace {

using ::braid::testing::NetFromText;
using ::braid::testing::TestScratchAreas;

TEST(ScratchAreaTest, GrowsAlignedAndKeepsItsBufferWhileLargeEnough) {
  ScratchArea area;
  EXPECT_EQ(area.capacity(), 0u);
  void* first = area.Reserve(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  EXPECT_EQ(area.capacity(), 128u);
  EXPECT_EQ(area.Reserve(128), first);
  EXPECT_EQ(area.Reserve(1), first);
  area.Reserve(1000);
  EXPECT_EQ(area.capacity(), 1024u);
}

// It used to CHECK-abort the process.
TEST(ScratchAreaTest, NoMemoryForTheAreaIsAResourceExhaustedError) {
  if (braid::testing::kSanitizerAllocator) GTEST_SKIP() << "the sanitizer's allocator aborts instead";
  ScratchArea area;
  area.Reserve(256);
  try {
    area.Reserve(size_t{1} << 62);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(e.status().message().find("scratch bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(area.capacity(), 0u);
  EXPECT_NE(area.Reserve(64), nullptr);  // usable again
}

TEST(ScratchScopeTest, InstallsTheAreaOnThisThreadOnlyAndRestoresThePreviousOne) {
  ScratchArea& own = ThreadScratch();
  ScratchArea outer, inner;
  {
    ScratchScope outer_scope(&outer);
    EXPECT_EQ(&ThreadScratch(), &outer);
    ScratchArea* other_thread = nullptr;
    std::thread([&] { other_thread = &ThreadScratch(); }).join();
    EXPECT_NE(other_thread, &outer);
    EXPECT_NE(other_thread, &own);
    {
      ScratchScope inner_scope(&inner);
      EXPECT_EQ(&ThreadScratch(), &inner);
    }
    EXPECT_EQ(&ThreadScratch(), &outer);
  }
  EXPECT_EQ(&ThreadScratch(), &own);
}

TEST(ScratchAreasTest, EqualizeGrowsEveryAreaToTheLargest) {
  ScratchAreas areas(3);
  areas.slot(1).Reserve(4096);
  areas.slot(2).Reserve(64);
  areas.Equalize();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(areas.slot(i).capacity(), 4096u) << i;
  EXPECT_EQ(areas.bytes(), 3 * 4096u);
}

// `width` independent TestScratch ops: op i uses 1000 * (i + 1) bytes for `us` microseconds.
NetDef ScratchNet(const std::string& type, int width, int workers, int us) {
  std::string text = "name: \"scratch\" type: \"" + type + "\" arg { name: \"num_workers\" i: " +
                     std::to_string(workers) +
                     " } arg { name: \"first_iter_only_one_worker\" i: 0 }";
  for (int i = 0; i < width; ++i) {
    text += " op { type: \"TestScratch\" output: \"s" + std::to_string(i) +
            "\" arg { name: \"bytes\" i: " + std::to_string(1000 * (i + 1)) +
            " } arg { name: \"us\" i: " + std::to_string(us) + " } }";
  }
  return NetFromText(text);
}

TEST(NetScratchTest, SimpleNetOpsShareOneAreaSizedByTheLargestOp) {
  Workspace ws;
  Net* net = ws.CreateNet(ScratchNet("simple", 5, 1, 0));
  {
    std::lock_guard<std::mutex> lock(TestScratchAreas().mu);
    TestScratchAreas().areas.clear();
  }
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(net->scratch_bytes(), 5056u);  // 5000 rounded up to 64
  std::lock_guard<std::mutex> lock(TestScratchAreas().mu);
  EXPECT_EQ(TestScratchAreas().areas.size(), 1u);
  EXPECT_EQ(TestScratchAreas().areas.count(&ThreadScratch()), 0u);  // the net's, not the thread's
}

TEST(NetScratchTest, DagWorkersNeverShareAnAreaAndAllAreasAreSizedAfterTheFirstRun) {
  for (int workers : {2, 3, 4}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    Workspace ws;
    Net* net = ws.CreateNet(ScratchNet("dag", 8, workers, 2000));
    {
      std::lock_guard<std::mutex> lock(TestScratchAreas().mu);
      TestScratchAreas().areas.clear();
    }
    // A TestScratch op fails if another op wrote its area while it slept.
    ASSERT_TRUE(net->Run().ok());
    const size_t sized = net->scratch_bytes();
    EXPECT_EQ(sized, workers * 8000u);
    for (int run = 0; run < 5; ++run) ASSERT_TRUE(net->Run().ok());
    EXPECT_EQ(net->scratch_bytes(), sized);
    std::lock_guard<std::mutex> lock(TestScratchAreas().mu);
    EXPECT_LE(TestScratchAreas().areas.size(), static_cast<size_t>(workers));
  }
}

}  // namespace
}  // namespace braid
