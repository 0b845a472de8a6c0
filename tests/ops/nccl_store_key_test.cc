// Where cross-process NCCL cliques share their unique id (ops/collective/nccl_store_key.h): the key
// ShareId asks for with its local devices and the collective's key names the collective alone, so
// processes that use different GPUs meet at the same store key.
#include "ops/collective/nccl_store_key.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/collective/process_allreduce_op.h"
#include "runtime/models/data_parallel.h"
#include "runtime/models/training_footprint.h"

namespace braid::test {
namespace {

Device Cuda(int id) { return Device{DeviceType::kCuda, id}; }

TEST(NcclStoreKeyTest, TheUniqueIdIsSharedUnderTheCollectivesKey) {
  EXPECT_EQ(NcclUniqueIdStoreKey({Cuda(0)}, "data_parallel_gradients"),
            "nccl/unique_id/data_parallel_gradients");
  EXPECT_NE(NcclUniqueIdStoreKey({Cuda(0)}, "a"), NcclUniqueIdStoreKey({Cuda(0)}, "b"));
}

// Two processes of one job, one on cuda:0 and one on cuda:1 (or two local devices each, on
// different GPUs), ask with their own devices and must meet at one key.
TEST(NcclStoreKeyTest, ProcessesOnDifferentGpusAskForOneKey) {
  EXPECT_EQ(NcclUniqueIdStoreKey({Cuda(0)}, "g"), NcclUniqueIdStoreKey({Cuda(1)}, "g"));
  EXPECT_EQ(NcclUniqueIdStoreKey({Cuda(0), Cuda(1)}, "g"),
            NcclUniqueIdStoreKey({Cuda(2), Cuda(3)}, "g"));
}

// The store keys of every ProcessAllreduce in the data-parallel nets of a process on cuda:0 and of
// one on cuda:1 (nets build without a GPU), each asked for with its replica's device and the NCCL
// engine's key for its tag, as ShareId asks.
std::vector<std::string> StoreKeysOfProcessOn(int gpu) {
  FootprintModel model;
  model.device = DeviceToProto(Device{DeviceType::kCuda, gpu});
  model.batch = 8;
  ProcessScaleOut nccl;
  nccl.world_size = 2;
  nccl.nccl = true;
  const TrainingNets dp = ReplicateForDevices(BuildFootprintNets(model), {model.device}, nccl);
  std::vector<std::string> keys;
  for (const OperatorDef& op : dp.train.op()) {
    EXPECT_NE(op.type(), "Allreduce") << "one device per process: nothing to reduce inside it";
    if (op.type() != "ProcessAllreduce") continue;
    EXPECT_EQ(DeviceFromProto(op.device_option()), (Device{DeviceType::kCuda, gpu}));
    int64_t tag = -1;
    for (const Argument& arg : op.arg()) {
      if (arg.name() == "tag") tag = arg.i();
    }
    EXPECT_GE(tag, 0) << op.name();
    keys.push_back(NcclUniqueIdStoreKey({DeviceFromProto(op.device_option())},
                                        ProcessAllreduceNcclKey(static_cast<uint32_t>(tag))));
  }
  return keys;
}

TEST(NcclStoreKeyTest, DataParallelProcessesOnDifferentGpusShareTheIdUnderOneKey) {
  const std::vector<std::string> on_gpu0 = StoreKeysOfProcessOn(0);
  ASSERT_FALSE(on_gpu0.empty());
  EXPECT_EQ(StoreKeysOfProcessOn(1), on_gpu0);
}

}  // namespace
}  // namespace braid::test
