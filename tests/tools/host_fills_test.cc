// MoveRandomFillsToHost (runtime/models/host_fills.h): which ops move, the seeds they keep, the
// copies that follow them, and the data-parallel init net braid_train builds for two GPUs (no GPU
// needed: only the nets are built).
#include "runtime/models/host_fills.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "planner/op_seed.h"
#include "runtime/core/device.h"
#include "runtime/models/data_parallel.h"
#include "runtime/models/training_footprint.h"
#include "testing/net_text.h"

namespace braid {
namespace {

TEST(HostFillsTest, RandomFillsOnADeviceMoveToTheHostKeepingTheirSeeds) {
  NetDef init = testing::NetFromText(R"(
    op { type: "MSRAFill" output: "w" arg { name: "shape" ints: [4, 3] }
         device_option { device_type: 1 device_id: 0 } }
    op { type: "ConstantFill" output: "b" arg { name: "shape" ints: [4] }
         device_option { device_type: 1 device_id: 0 } }
    op { type: "XavierFill" output: "v" arg { name: "shape" ints: [2] } }
    op { type: "UniformFill" output: "u" arg { name: "shape" ints: [2] }
         device_option { device_type: 1000 device_id: 1 random_seed: 77 } }
    op { type: "GaussianFill" input: "shape_source" output: "g"
         device_option { device_type: 1 device_id: 0 } })");
  const NetDef original = init;
  const std::vector<std::string> staged = MoveRandomFillsToHost(&init);
  EXPECT_EQ(staged, (std::vector<std::string>{"host/w", "host/u"}));
  ASSERT_EQ(init.op_size(), 7);
  // MSRAFill: on the host, writing host/w with the seed its output name gave it on cuda:0.
  EXPECT_EQ(init.op(0).type(), "MSRAFill");
  EXPECT_TRUE(DeviceFromProto(init.op(0).device_option()).is_host());
  EXPECT_EQ(init.op(0).output(0), "host/w");
  EXPECT_EQ(OpSeed(init.op(0)), OpSeed(original.op(0)));
  EXPECT_EQ(init.op(1).type(), "CopyCPUToGPU");
  EXPECT_EQ(init.op(1).input(0), "host/w");
  EXPECT_EQ(init.op(1).output(0), "w");
  EXPECT_EQ(DeviceFromProto(init.op(1).device_option()), (Device{DeviceType::kCuda, 0}));
  // ConstantFill and a fill already on the host stay.
  EXPECT_EQ(init.op(2).ShortDebugString(), original.op(1).ShortDebugString());
  EXPECT_EQ(init.op(3).ShortDebugString(), original.op(2).ShortDebugString());
  // A device's random_seed becomes the host op's seed argument.
  EXPECT_EQ(init.op(4).output(0), "host/u");
  EXPECT_EQ(OpSeed(init.op(4)), 77u);
  EXPECT_EQ(DeviceFromProto(init.op(5).device_option()), (Device{DeviceType::kSim, 1}));
  // A fill shaped by an input (in device memory) stays on its device.
  EXPECT_EQ(init.op(6).ShortDebugString(), original.op(4).ShortDebugString());
}

// braid_train's init net for --devices cuda:0,cuda:1: no random fill runs on a GPU, each writes
// a host blob that is copied to cuda:0, and cuda:1 gets cuda:0's values by a Copy.
TEST(HostFillsTest, TheDataParallelInitNetForTwoGpusFillsEveryRandomParameterOnTheHost) {
  FootprintModel model;
  model.device = DeviceToProto(Device{DeviceType::kCuda, 0});
  model.batch = 16;
  TrainingNets nets = ReplicateForDevices(
      BuildFootprintNets(model),
      {DeviceToProto(Device{DeviceType::kCuda, 0}), DeviceToProto(Device{DeviceType::kCuda, 1})});
  const std::vector<std::string> staged = MoveRandomFillsToHost(&nets.params.init_net);
  EXPECT_GT(staged.size(), 20u);              // ResNet-20's conv and FC weights
  std::map<std::string, std::string> writer;  // blob -> the type of the op that writes it
  for (const OperatorDef& op : nets.params.init_net.op()) {
    const Device device = DeviceFromProto(op.device_option());
    if (IsRandomFill(op.type())) {
      EXPECT_TRUE(device.is_host()) << op.ShortDebugString();
    }
    for (const std::string& out : op.output()) writer[out] = op.type();
  }
  for (const std::string& host_blob : staged) {
    const std::string param = host_blob.substr(std::string("host/").size());
    EXPECT_EQ(param.rfind("gpu_0/", 0), 0u) << param;
    EXPECT_EQ(writer[param], "CopyCPUToGPU") << param;
    EXPECT_EQ(writer["gpu_1/" + param.substr(6)], "Copy") << param;
  }
}

}  // namespace
}  // namespace braid
