// Where cross-process NCCL cliques share their unique id (ops/collective/nccl_store_key.h): under
// the collective's key alone, so processes that use different GPUs meet at the same store key.
#include "ops/collective/nccl_store_key.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/models/data_parallel.h"
#include "runtime/models/training_footprint.h"

namespace braid::test {
namespace {

TEST(NcclStoreKeyTest, TheUniqueIdIsSharedUnderTheCollectivesKeyAlone) {
  EXPECT_EQ(NcclUniqueIdStoreKey("data_parallel_gradients"),
            "nccl/unique_id/data_parallel_gradients");
  EXPECT_NE(NcclUniqueIdStoreKey("a"), NcclUniqueIdStoreKey("b"));
}

// The store keys of every NCCL Allreduce in the data-parallel nets of a process on cuda:0 and of
// one on cuda:1 (nets build without a GPU).
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
    if (op.type() != "Allreduce") continue;
    std::string key = op.output(0);  // the default
    for (const Argument& arg : op.arg()) {
      if (arg.name() == "key") key = arg.s();
    }
    keys.push_back(NcclUniqueIdStoreKey(key));
  }
  return keys;
}

TEST(NcclStoreKeyTest, ProcessesOnDifferentGpusShareTheIdUnderOneKey) {
  const std::vector<std::string> on_gpu0 = StoreKeysOfProcessOn(0);
  ASSERT_FALSE(on_gpu0.empty());
  EXPECT_EQ(StoreKeysOfProcessOn(1), on_gpu0);
}

}  // namespace
}  // namespace braid::test
