// Device mappings (runtime/device/device_mapping.h) and the collectives' engine choice over them
// (runtime/device/collective.h ChooseCollectiveEngine): pure functions, no device needed.
#include "runtime/device/device_mapping.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/device/collective.h"

namespace braid {
namespace {

Device Cuda(int id) { return Device{DeviceType::kCuda, id}; }
Device Sim(int id) { return Device{DeviceType::kSim, id}; }
Device Cpu(int id) { return Device{DeviceType::kCpu, id}; }

TEST(DeviceMappingTest, ACommaListGivesEachLogicalDeviceItsPhysicalOne) {
  std::vector<int> ids;
  ASSERT_TRUE(ParseDeviceMapping("BRAID_CUDA_DEVICES", "0,0", 1, &ids).ok());
  EXPECT_EQ(ids, (std::vector<int>{0, 0}));
  ASSERT_TRUE(ParseDeviceMapping("BRAID_CUDA_DEVICES", "1,0,1", 2, &ids).ok());
  EXPECT_EQ(ids, (std::vector<int>{1, 0, 1}));
  ASSERT_TRUE(ParseDeviceMapping("BRAID_SIM_DEVICES", "3", 64, &ids).ok());
  EXPECT_EQ(ids, (std::vector<int>{3}));
}

TEST(DeviceMappingTest, AMalformedListIsAnErrorNamingTheVariable) {
  for (const char* text : {"", ",", "0,", ",0", "0,,1", "a", "0,x", "-1", " 0", "0 ", "1.0",
                           "99999999999"}) {
    std::vector<int> ids = {7};
    const Status s = ParseDeviceMapping("BRAID_CUDA_DEVICES", text, 4, &ids);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << "'" << text << "'";
    EXPECT_NE(s.message().find("BRAID_CUDA_DEVICES='" + std::string(text) + "'"),
              std::string::npos)
        << s.message();
    EXPECT_EQ(ids, (std::vector<int>{7})) << "left as it was";
  }
}

TEST(DeviceMappingTest, AnIdBeyondTheMachinesDevicesSaysHowManyItHas) {
  std::vector<int> ids;
  Status s = ParseDeviceMapping("BRAID_CUDA_DEVICES", "0,1", 1, &ids);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("names physical device 1, but this machine has 1 (ids 0 to 0)"),
            std::string::npos)
      << s.message();
  s = ParseDeviceMapping("BRAID_CUDA_DEVICES", "0", 0, &ids);
  EXPECT_NE(s.message().find("this machine has none"), std::string::npos) << s.message();
}

TEST(DeviceMappingTest, AnUnsetVariableIsTheIdentity) {
  std::vector<int> ids = {1, 2};
  ASSERT_TRUE(DeviceMappingFromEnvironment("BRAID_TEST_MAPPING_THAT_IS_NEVER_SET", 2, &ids).ok());
  EXPECT_TRUE(ids.empty());
}

CollectiveEngine Chosen(const std::vector<Device>& ranks, const std::vector<Device>& physical) {
  CollectiveEngine engine = CollectiveEngine::kHost;
  const Status s = ChooseCollectiveEngine(ranks, physical, &engine);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return engine;
}

TEST(CollectiveEngineTest, CudaRanksUseNcclOnlyOnDistinctPhysicalGpus) {
  EXPECT_EQ(Chosen({Cuda(0), Cuda(1)}, {Cuda(0), Cuda(1)}), CollectiveEngine::kNccl);
  EXPECT_EQ(Chosen({Cuda(0), Cuda(1), Cuda(2)}, {Cuda(2), Cuda(0), Cuda(1)}),
            CollectiveEngine::kNccl);
  // Two logical GPUs of GPU 0 (BRAID_CUDA_DEVICES=0,0): NCCL refuses two ranks on one GPU.
  EXPECT_EQ(Chosen({Cuda(0), Cuda(1)}, {Cuda(0), Cuda(0)}), CollectiveEngine::kRankKernels);
  EXPECT_EQ(Chosen({Cuda(0), Cuda(1), Cuda(2), Cuda(3)}, {Cuda(1), Cuda(1), Cuda(1), Cuda(1)}),
            CollectiveEngine::kRankKernels);
}

TEST(CollectiveEngineTest, SimRanksUseRankKernelsAndCpuRanksTheHost) {
  EXPECT_EQ(Chosen({Sim(0), Sim(1)}, {Sim(0), Sim(1)}), CollectiveEngine::kRankKernels);
  EXPECT_EQ(Chosen({Sim(0), Sim(1)}, {Sim(0), Sim(0)}), CollectiveEngine::kRankKernels);
  EXPECT_EQ(Chosen({Cpu(0), Cpu(1)}, {Cpu(0), Cpu(0)}), CollectiveEngine::kHost);
}

TEST(CollectiveEngineTest, RanksOfWhichSomeShareAGpuOrMixedTypesAreRefused) {
  CollectiveEngine engine;
  Status s = ChooseCollectiveEngine({Cuda(0), Cuda(1), Cuda(2)}, {Cuda(0), Cuda(0), Cuda(1)},
                                    &engine);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("cuda:0, cuda:1 (physical GPU 0), cuda:2 (physical GPU 1)"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("BRAID_CUDA_DEVICES"), std::string::npos) << s.message();
  s = ChooseCollectiveEngine({Cuda(0), Sim(1)}, {Cuda(0), Sim(1)}, &engine);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("mixes device types"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace braid
