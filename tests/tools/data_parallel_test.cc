// Data-parallel training (runtime/models/data_parallel.h, TrainingLoop with several devices):
// replicated nets, one Allreduce per gradient, ProcessAllreduce buckets across processes,
// 2 devices x batch B == 1 device x batch 2B, and no allocation once the first iteration has run.
#include "runtime/models/data_parallel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "runtime/core/allocator.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/dag_net.h"
#include "runtime/exec/net.h"
#include "runtime/models/model_builder.h"
#include "runtime/train/training_loop.h"
#include "testing/small_training.h"

namespace braid {
namespace {

DeviceOption Cpu(int id) {
  DeviceOption d;
  d.set_device_id(id);
  return d;
}

OperatorDef SyntheticReader(int64_t batch) {
  OperatorDef op = SyntheticImageReader({batch, 1, 8, 4, /*examples=*/64}, "reader");
  AddIntArg(&op, "shuffle", 1);
  return op;
}

// Conv -> Relu -> global pool -> FC, no batch norm: per-device batches then compute exactly what
// one device computes on the whole batch.
TrainingNets SmallNets(int64_t global_batch, const std::string& optimizer = "momentum") {
  TrainingNetsSpec spec;
  spec.optimizer.type = optimizer;
  // Adam and Adagrad divide by the root of squared gradients: an epsilon this large keeps the
  // step of a near-zero gradient continuous in it, so rounding cannot flip its sign.
  spec.optimizer.epsilon = 1e-3f;
  spec.name = "small";
  spec.forward = [](ModelBuilder* b, const std::string& data) {
    std::string x = b->Relu(b->Conv(data, "conv1", 1, 8, 3, 1, 1, /*bias=*/true), "relu1");
    return b->FC(b->GlobalAveragePool(x, "pool"), "fc", 8, 4);
  };
  spec.train_input = SyntheticReader(global_batch);
  spec.test_input = SyntheticReader(16);
  spec.optimizer.lr.policy = "fixed";
  spec.optimizer.lr.base_lr = 0.1f;
  return BuildTrainingNets(spec);
}

TEST(DataParallelTest, EveryDeviceGetsScopedOpsAndEachGradientOneAllreduce) {
  const TrainingNets single = SmallNets(8);
  const TrainingNets dp = ReplicateForDevices(single, {Cpu(0), Cpu(1)});
  EXPECT_EQ(dp.OnDevice(1, dp.loss), "cpu_1/loss");
  EXPECT_EQ(CountOps(dp.train, "Allreduce"), CountOps(single.train, "MomentumSGDUpdate"));
  EXPECT_EQ(CountOps(dp.train, "MomentumSGDUpdate"),
            2 * CountOps(single.train, "MomentumSGDUpdate"));
  EXPECT_EQ(CountOps(dp.train, "Split"), 2);  // data and label
  for (const OperatorDef& op : dp.train.op()) {
    if (op.type() != "Allreduce") continue;
    ASSERT_EQ(op.input_size(), 2);
    EXPECT_EQ(op.input(0).substr(0, 6), "cpu_0/");
    EXPECT_EQ(op.input(1), "cpu_1/" + op.input(0).substr(6));
  }
  for (const OperatorDef& op : dp.train.op()) {
    if (op.type() == "MomentumSGDUpdate") {
      EXPECT_EQ(op.input(0).substr(0, 4), "cpu_");
      EXPECT_EQ(op.device_option().device_id(), op.input(0)[4] - '0');
    }
  }
}

TEST(DataParallelTest, AllreducesFormOneChainInTheOrderGradientsAreReady) {
  const TrainingNets dp = ReplicateForDevices(SmallNets(8), {Cpu(0), Cpu(1)});
  std::map<std::string, int> last_writer;  // before the allreduces
  std::vector<int> allreduces;
  for (int i = 0; i < dp.train.op_size(); ++i) {
    const OperatorDef& op = dp.train.op(i);
    if (op.type() == "Allreduce") {
      allreduces.push_back(i);
      continue;
    }
    if (allreduces.empty()) {
      for (const std::string& out : op.output()) last_writer[out] = i;
    }
  }
  ASSERT_GE(allreduces.size(), 4u);
  EXPECT_EQ(dp.train.op(allreduces[0]).control_input_size(), 0);
  for (size_t k = 1; k < allreduces.size(); ++k) {
    const OperatorDef& op = dp.train.op(allreduces[k]);
    const OperatorDef& before = dp.train.op(allreduces[k - 1]);
    ASSERT_EQ(op.control_input_size(), 1) << op.name();
    EXPECT_EQ(op.control_input(0), before.output(0)) << op.name();
    EXPECT_LE(last_writer[before.input(1)], last_writer[op.input(1)])
        << before.name() << " is ready after " << op.name();
  }
}

// The ProcessAllreduce ops of a multi-process train net, in net order.
std::vector<OperatorDef> ProcessAllreduces(const TrainingNets& dp) {
  std::vector<OperatorDef> ops;
  for (const OperatorDef& op : dp.train.op()) {
    if (op.type() == "ProcessAllreduce") ops.push_back(op);
  }
  return ops;
}

int64_t IntArg(const OperatorDef& op, const std::string& name) {
  for (const Argument& arg : op.arg()) {
    if (arg.name() == name) return arg.i();
  }
  return -1;
}

TEST(DataParallelTest, ProcessesAllreduceGradientsInBucketsOfTheirByteCap) {
  const TrainingNets single = SmallNets(8);
  const int gradients = CountOps(single.train, "MomentumSGDUpdate");  // fc_w 32, fc_b 4, conv 72+8
  // No cap: one bucket per gradient. 200 bytes: fc_w + fc_b (144 bytes), then conv1_w (288) alone,
  // then conv1_b. Unbounded: all in one.
  for (const auto& [cap, expected] :
       std::vector<std::pair<int64_t, std::vector<int>>>{
           {0, {1, 1, 1, 1}}, {200, {2, 1, 1}}, {int64_t{1} << 30, {4}}}) {
    const TrainingNets dp = ReplicateForDevices(single, {Cpu(0), Cpu(1)}, {2, "ring", cap});
    EXPECT_EQ(CountOps(dp.train, "Allreduce"), 0) << "the ProcessAllreduce sums the devices";
    const std::vector<OperatorDef> buckets = ProcessAllreduces(dp);
    ASSERT_EQ(buckets.size(), expected.size()) << "cap " << cap;
    int covered = 0;
    for (size_t k = 0; k < buckets.size(); ++k) {
      const OperatorDef& op = buckets[k];
      EXPECT_EQ(IntArg(op, "tensors"), expected[k]) << op.name();
      EXPECT_EQ(IntArg(op, "tag"), static_cast<int64_t>(k)) << op.name();
      EXPECT_EQ(IntArg(op, "weight"), 1) << op.name();  // a rank's mean, not its devices' sum
      ASSERT_EQ(op.input_size(), 2 * expected[k]) << op.name();  // replica-major
      for (int t = 0; t < expected[k]; ++t) {
        EXPECT_EQ(op.input(t).substr(0, 6), "cpu_0/") << op.name();
        EXPECT_EQ(op.input(expected[k] + t), "cpu_1/" + op.input(t).substr(6)) << op.name();
      }
      if (k > 0) {
        ASSERT_EQ(op.control_input_size(), 1) << op.name();
        EXPECT_EQ(op.control_input(0), buckets[k - 1].output(0)) << op.name();
      }
      covered += expected[k];
    }
    EXPECT_EQ(covered, gradients);
  }
}

// Every rank weighs 1 in the mean across processes: each reads the same number of examples
// (batch_size / world_size), so a rank of more devices must not weigh more.
TEST(DataParallelTest, ProcessesOfSimulatedGpusReduceHostCopiesOfTheirDevicesMeans) {
  const TrainingNets single = SmallNets(8);
  const int gradients = CountOps(single.train, "MomentumSGDUpdate");
  const std::vector<DeviceOption> sims = {DeviceToProto(ParseDevice("sim:0")),
                                          DeviceToProto(ParseDevice("sim:1"))};
  const TrainingNets dp = ReplicateForDevices(single, sims, {2, "ring", int64_t{1} << 30});
  EXPECT_EQ(CountOps(dp.train, "Allreduce"), gradients);  // over the devices first
  for (const OperatorDef& op : dp.train.op()) {
    if (op.type() == "Allreduce") {
      EXPECT_EQ(IntArg(op, "average"), 1) << op.name();
    }
  }
  EXPECT_EQ(CountOps(dp.train, "CopyGPUToCPU"), gradients);
  const std::vector<OperatorDef> buckets = ProcessAllreduces(dp);
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].input_size(), gradients);
  EXPECT_EQ(IntArg(buckets[0], "average"), 1);
  EXPECT_EQ(IntArg(buckets[0], "weight"), 1);
  for (const std::string& input : buckets[0].input()) EXPECT_EQ(input.substr(0, 11), "host/sim_0/");
  EXPECT_FALSE(DeviceFromProto(buckets[0].device_option()).type == DeviceType::kSim);
  int back = 0;
  for (const OperatorDef& op : dp.train.op()) {
    if (op.type() != "CopyCPUToGPU" || op.input(0).substr(0, 5) != "host/") continue;
    EXPECT_EQ(op.output(0), DeviceScope(op.device_option()) + op.input(0).substr(11));
    ++back;
  }
  EXPECT_EQ(back, 2 * gradients);
  EXPECT_THROW(ReplicateForDevices(single, {Cpu(0), sims[1]}, {2, "ring"}), Error);
}

TEST(DataParallelTest, ProcessesOfGpusCanAllreduceWithOneNcclCommunicator) {
  const TrainingNets single = SmallNets(8);
  const int gradients = CountOps(single.train, "MomentumSGDUpdate");
  const std::vector<DeviceOption> gpus = {DeviceToProto(ParseDevice("cuda:0")),
                                          DeviceToProto(ParseDevice("cuda:1"))};
  ProcessScaleOut nccl{2, "ring"};
  nccl.nccl = true;
  nccl.bucket_bytes = 0;  // one gradient per bucket, so the count below is the gradients'
  // One GPU per process still all-reduces: across the processes. Every device's gradients go to
  // the ProcessAllreduce (its NCCL engine reduces the GPUs of every process at once): no device
  // Allreduce, no host copies.
  for (const auto& devices : {std::vector<DeviceOption>{gpus[0]}, gpus}) {
    const TrainingNets dp = ReplicateForDevices(single, devices, nccl);
    EXPECT_EQ(CountOps(dp.train, "Allreduce"), 0);
    EXPECT_EQ(CountOps(dp.train, "CopyGPUToCPU"), 0);
    int reduces = 0;
    for (const OperatorDef& op : dp.train.op()) {
      if (op.type() != "ProcessAllreduce") continue;
      EXPECT_EQ(DeviceFromProto(op.device_option()), ParseDevice("cuda:0")) << op.name();
      EXPECT_EQ(IntArg(op, "tensors"), 1) << op.name();
      EXPECT_EQ(IntArg(op, "weight"), 1) << op.name();
      EXPECT_EQ(IntArg(op, "average"), 1) << op.name();
      EXPECT_EQ(IntArg(op, "tag"), 0) << op.name();  // one tag: one NCCL communicator
      EXPECT_EQ(op.control_input_size(), reduces == 0 ? 0 : 1) << op.name();  // chained
      EXPECT_EQ(op.input_size(), static_cast<int>(devices.size())) << op.name();
      for (size_t d = 0; d < devices.size(); ++d) {
        EXPECT_EQ(op.input(d).rfind(DeviceScope(devices[d]), 0), 0u) << op.input(d);
      }
      ++reduces;
    }
    EXPECT_EQ(reduces, gradients);
  }
  EXPECT_THROW(ReplicateForDevices(single, {DeviceToProto(ParseDevice("sim:0"))}, nccl), Error);
}

void ExpectTwoDevicesMatchOne(const std::string& optimizer, int steps) {
  const TrainingNets single = SmallNets(8, optimizer);
  const TrainingNets dp = ReplicateForDevices(single, {Cpu(0), Cpu(1)});
  Workspace one, two;
  ASSERT_TRUE(one.RunNetOnce(single.params.init_net).ok());
  ASSERT_TRUE(two.RunNetOnce(dp.params.init_net).ok());
  NetDef dp_train = dp.train;
  dp_train.set_type("dag");
  Net* net_one = one.CreateNet(single.train);
  Net* net_two = two.CreateNet(dp_train);
  for (int step = 0; step < steps; ++step) {
    ASSERT_TRUE(net_one->Run().ok());
    const Status s = net_two->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  for (const ParamInfo& p : single.params.params) {
    const Tensor* expected = one.GetBlob(p.name);
    for (int d = 0; d < 2; ++d) {
      const Tensor* got = two.GetBlob(dp.OnDevice(d, p.name));
      ASSERT_EQ(got->shape(), expected->shape()) << p.name;
      for (int64_t i = 0; i < got->numel(); ++i) {
        const float e = expected->data<float>()[i], g = got->data<float>()[i];
        ASSERT_NEAR(g, e, 1e-5f + 1e-4f * std::fabs(e))
            << dp.OnDevice(d, p.name) << "[" << i << "]";
      }
    }
  }
}

TEST(DataParallelTest, TwoDevicesWithHalfBatchesMatchOneDeviceWithTheWholeBatch) {
  ExpectTwoDevicesMatchOne("momentum", 20);
}

// Every optimizer's update reads the averaged gradient: one Allreduce per gradient, whichever
// input of its update op the gradient is.
TEST(DataParallelTest, AdamAdamWAndAdagradReplicasMatchOneDevice) {
  for (const char* optimizer : {"adam", "adamw", "adagrad"}) {
    SCOPED_TRACE(optimizer);
    const TrainingNets dp = ReplicateForDevices(SmallNets(8, optimizer), {Cpu(0), Cpu(1)});
    int allreduces = 0;
    for (const OperatorDef& op : dp.train.op()) allreduces += op.type() == "Allreduce" ? 1 : 0;
    EXPECT_EQ(allreduces, 4);  // conv1_w, conv1_b, fc_w, fc_b
    ExpectTwoDevicesMatchOne(optimizer, 8);
  }
}

// Collectives on the dag executor: with any number of workers (and so any order of the devices'
// branches and of the Allreduce ops among themselves) the run neither hangs nor changes a bit.
TEST(DataParallelTest, AnyWorkerCountRunsTheCollectivesToTheSameBits) {
  const TrainingNets dp = ReplicateForDevices(SmallNets(12), {Cpu(0), Cpu(1), Cpu(2)});
  auto train = [&](const std::string& type, int workers) {
    Workspace ws;
    EXPECT_TRUE(ws.RunNetOnce(dp.params.init_net).ok());
    NetDef def = dp.train;
    def.set_type(type);
    Argument* arg = def.add_arg();
    arg->set_name("num_workers");
    arg->set_i(workers);
    arg = def.add_arg();
    arg->set_name("intra_op_threads");  // every count's ops on one team size: the same primitives
    arg->set_i(1);
    Net* net = ws.CreateNet(def);
    // Allreduce is a collective: the first run goes one op at a time (runtime/exec/dag_net.h).
    if (type == "dag") {
      EXPECT_TRUE(static_cast<DagNet*>(net)->first_iter_only_one_worker());
    }
    for (int step = 0; step < 3; ++step) EXPECT_TRUE(net->Run().ok());
    std::string bits;
    for (const std::string& blob : dp.CheckpointBlobs()) {
      const Tensor* t = ws.GetBlob(blob);
      bits.append(static_cast<const char*>(t->raw_data()), t->nbytes());
    }
    return bits;
  };
  const std::string expected = train("simple", 1);
  for (int workers : {1, 2, 3, 4, 8}) {
    EXPECT_EQ(train("dag", workers), expected) << workers << " workers";
  }
}

TrainingLoopOptions TwoDeviceRun() {
  TrainingLoopOptions o = SmallSyntheticTraining({Cpu(0), Cpu(1)});
  o.iters = 6;
  o.optimizer.lr.policy = "fixed";
  o.optimizer.lr.base_lr = 0.05f;
  return o;
}

TEST(DataParallelTest, NothingIsAllocatedAfterTheFirstIteration) {
  TrainingLoop trainer(TwoDeviceRun());
  ASSERT_EQ(trainer.train_memory()->plan().arenas.size(), 2u);  // one arena per device
  trainer.Step();  // the first iteration: single-threaded, lazy allocations happen here
  const AllocatorStats before = CpuAllocator()->stats();
  for (int i = 0; i < 4; ++i) trainer.Step();
  EXPECT_EQ(CpuAllocator()->stats().allocations, before.allocations);
}

TEST(DataParallelTest, DagAndSimpleExecutorsTrainTwoDevicesBitForBitAlike) {
  TrainingLoopOptions options = TwoDeviceRun();
  options.intra_op_threads = 1;  // the dag's replicas would get a thread each, simple's ops two
  TrainingLoop dag(options);
  options.executor = "simple";
  TrainingLoop simple(options);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(dag.Step(), simple.Step()) << "step " << i;
  for (const std::string& blob : dag.nets().CheckpointBlobs()) {
    const Tensor* x = dag.workspace().GetBlob(blob);
    const Tensor* y = simple.workspace().GetBlob(blob);
    ASSERT_EQ(std::string(static_cast<const char*>(x->raw_data()), x->nbytes()),
              std::string(static_cast<const char*>(y->raw_data()), y->nbytes()))
        << blob;
  }
}

TEST(DataParallelTest, BatchThatDoesNotSplitEvenlyIsRefused) {
  TrainingLoopOptions options = TwoDeviceRun();
  options.batch_size = 15;
  try {
    TrainingLoop trainer(options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not split evenly over 2 devices"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace braid
