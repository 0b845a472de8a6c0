// Tests of the training nets (runtime/models/training_nets.h), checkpoints and the single-device
// TrainingLoop (runtime/train), on synthetic data so they need no files.
#include "braid/trainer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/core/allocator.h"
#include "runtime/core/device.h"
#include "runtime/io/checkpoint.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_nets.h"
#include "runtime/train/training_loop.h"
#include "testing/host_copies.h"
#include "testing/small_training.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

TrainingNets ResNet20Nets() {
  TrainingNetsSpec spec;
  spec.name = "resnet20";
  spec.forward = [](ModelBuilder* b, const std::string& data) {
    return AddResNet(b, ResNetSpecFromName("resnet20", 1, 10), data);
  };
  spec.train_input = SyntheticImageReader({8, 1, 28, 10}, "train_reader");
  spec.test_input = SyntheticImageReader({8, 1, 28, 10}, "test_reader");
  spec.optimizer.lr.max_iter = 100;
  return BuildTrainingNets(spec);
}

const Argument* FindArg(const OperatorDef& op, const std::string& name) {
  for (const Argument& arg : op.arg()) {
    if (arg.name() == name) return &arg;
  }
  return nullptr;
}

TEST(TrainingNetsTest, EveryTrainedParameterGetsAMomentumUpdate) {
  const TrainingNets nets = ResNet20Nets();
  std::set<std::string> updated;
  for (const OperatorDef& op : nets.train.op()) {
    if (op.type() != "MomentumSGDUpdate") continue;
    ASSERT_EQ(op.input_size(), 4);
    ASSERT_EQ(op.output_size(), 3);
    EXPECT_EQ(op.output(0), op.input(0));  // grad, moment and param are updated in place
    EXPECT_EQ(op.output(1), op.input(1));
    EXPECT_EQ(op.output(2), op.input(3));
    EXPECT_EQ(op.input(2), nets.lr);
    const ParamInfo* param = nets.params.Find(op.input(3));
    ASSERT_NE(param, nullptr) << op.input(3);
    EXPECT_EQ(op.input(1), param->name + "_momentum");
    EXPECT_EQ(FindArg(op, "weight_decay")->f(), param->weight_decay() ? 1e-4f : 0.f) << param->name;
    updated.insert(param->name);
  }
  std::set<std::string> trainable;
  for (const ParamInfo& p : nets.params.params) {
    if (p.trainable()) trainable.insert(p.name);
  }
  EXPECT_EQ(updated, trainable);
  EXPECT_EQ(nets.optimizer_blobs.size(), trainable.size());
  EXPECT_EQ(CountOps(nets.train, "Iter"), 1);
  EXPECT_EQ(CountOps(nets.train, "LearningRate"), 1);
  EXPECT_EQ(nets.train.op(0).output(0), "data");
  EXPECT_EQ(nets.train.op(0).output(1), "label");
  EXPECT_EQ(nets.CheckpointBlobs().size(), nets.params.params.size() + trainable.size() + 1);
}

TEST(TrainingNetsTest, TestNetReadsTheTrainParametersAndWritesOnlyPrefixedBlobs) {
  const TrainingNets nets = ResNet20Nets();
  EXPECT_EQ(CountOps(nets.test, "MomentumSGDUpdate"), 0);
  EXPECT_EQ(CountOps(nets.test, "SpatialBN"), CountOps(nets.train, "SpatialBN"));
  for (const OperatorDef& op : nets.test.op()) {
    EXPECT_FALSE(op.is_gradient_op());
    for (const std::string& out : op.output()) EXPECT_EQ(out.rfind("test/", 0), 0u) << out;
  }
  EXPECT_NE(NetToText(nets.test).find("test/accuracy"), std::string::npos);
}

TEST(TrainingNetsTest, BadOptimizerSettingsAreRejected) {
  TrainingNetsSpec spec;
  spec.forward = [](ModelBuilder* b, const std::string& data) {
    return AddResNet(b, ResNetSpecFromName("resnet20", 1, 10), data);
  };
  spec.optimizer.lr.policy = "triangle";
  Status s = StatusFromCall([&] { BuildTrainingNets(spec); });
  EXPECT_NE(s.message().find("unknown learning-rate policy 'triangle'"), std::string::npos)
      << s.ToString();
  spec.optimizer.lr.policy = "cosine";
  spec.optimizer.lr.max_iter = 0;
  s = StatusFromCall([&] { BuildTrainingNets(spec); });
  EXPECT_NE(s.message().find("max_iter"), std::string::npos) << s.ToString();
}

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braid_trainer_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // ResNet-20 on 12x12 synthetic images: a few iterations take a fraction of a second.
  static TrainingLoopOptions SmallRun() {
    TrainingLoopOptions o = SmallPlainTraining(/*seed=*/3);
    o.iters = 30;
    return o;
  }

  fs::path dir_;
};

// Bit-for-bit equality of every checkpointed blob of two trainers.
::testing::AssertionResult SameState(const TrainingLoop& a, const TrainingLoop& b) {
  for (const std::string& name : a.nets().CheckpointBlobs()) {
    const Tensor* x = a.workspace().GetBlob(name);
    const Tensor* y = b.workspace().GetBlob(name);
    if (x->shape() != y->shape() || x->dtype() != y->dtype() ||
        std::memcmp(x->raw_data(), y->raw_data(), x->nbytes()) != 0) {
      return ::testing::AssertionFailure() << "blob '" << name << "' differs";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST_F(TrainerTest, LossDecreasesOnSyntheticData) {
  TrainingLoop trainer(SmallRun());
  std::vector<float> losses;
  while (trainer.iteration() < trainer.total_iterations()) losses.push_back(trainer.Step());
  const double first = (losses[0] + losses[1] + losses[2]) / 3;
  const double last = (losses[27] + losses[28] + losses[29]) / 3;
  EXPECT_LT(last, 0.5 * first) << "loss went from " << first << " to " << last;
  const Evaluation e = trainer.Evaluate();
  EXPECT_EQ(e.examples, 48);
  EXPECT_GT(e.accuracy, 0.5);
}

TEST_F(TrainerTest, ResumeRestoresIdenticalParametersAndContinuesTheSameRun) {
  const std::string path = (dir_ / "run.pb").string();
  TrainingLoopOptions options = SmallRun();
  options.iters = 8;
  TrainingLoop original(options);
  for (int i = 0; i < 4; ++i) original.Step();
  original.SaveCheckpoint(path);

  options.checkpoint = path;
  options.resume = true;
  TrainingLoop resumed(options);
  EXPECT_EQ(resumed.iteration(), 4);
  EXPECT_TRUE(SameState(original, resumed));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(original.Step(), resumed.Step()) << "step " << i;
  EXPECT_TRUE(SameState(original, resumed));
}

TEST_F(TrainerTest, SimpleAndDagExecutorsTrainBitForBitAlike) {
  TrainingLoopOptions options = SmallRun();
  options.executor = "simple";
  TrainingLoop simple(options);
  options.executor = "dag";
  options.threads = 2;
  TrainingLoop dag(options);
  std::cout << "seed " << options.seed << ", dag with 2 workers\n";
  for (int i = 0; i < 4; ++i) EXPECT_EQ(simple.Step(), dag.Step()) << "step " << i;
  EXPECT_TRUE(SameState(simple, dag));
  EXPECT_EQ(simple.Evaluate().accuracy, dag.Evaluate().accuracy);
}

TEST_F(TrainerTest, MemoryPlanTrainsBitForBitAlikeAndAllocatesNothingPerStep) {
  TrainingLoopOptions options = SmallRun();
  TrainingLoop plain(options);
  options.memory_plan = true;
  options.recompute = false;  // the same nets as plain's: only the memory differs
  options.executor = "dag";
  options.threads = 2;
  TrainingLoop planned(options);
  const MemoryPlan& plan = planned.train_memory()->plan();
  EXPECT_LT(plan.arena_bytes(), plan.naive_bytes() / 2);
  EXPECT_EQ(planned.test_memory()->allocated_bytes(), 0);  // the test net fits the train arena
  for (int i = 0; i < 2; ++i) EXPECT_EQ(plain.Step(), planned.Step()) << "step " << i;
  EXPECT_EQ(plain.Evaluate().accuracy, planned.Evaluate().accuracy);
  const int64_t allocations = CpuAllocator()->stats().allocations;
  for (int i = 2; i < 5; ++i) EXPECT_EQ(plain.Step(), planned.Step()) << "step " << i;
  // plain's steady-state steps allocate nothing either; both share the CPU allocator.
  EXPECT_EQ(CpuAllocator()->stats().allocations, allocations);
  EXPECT_TRUE(SameState(plain, planned));
  EXPECT_EQ(plain.Evaluate().accuracy, planned.Evaluate().accuracy);
}

// `count` devices of `type`: ids 0..count-1.
struct DeviceList {
  DeviceType type;
  int count;
  std::vector<DeviceOption> options() const {
    std::vector<DeviceOption> devices;
    for (int id = 0; id < count; ++id) devices.push_back(DeviceToProto(Device{type, id}));
    return devices;
  }
  std::string name() const { return Device{type, 0}.ToString() + " x" + std::to_string(count); }
};

// The test net (batch 96 on the first device) needs more than the train net's arena there (batch
// 8 per device): the shared arena grows, and training and evaluation, alternating, keep the bits
// of unplanned nets.
TEST_F(TrainerTest, TestNetLargerThanTheTrainArenaGrowsItAndKeepsTheBits) {
  for (const DeviceList& devices : {DeviceList{DeviceType::kCpu, 1}, {DeviceType::kSim, 2}}) {
    SCOPED_TRACE(devices.name());
    TrainingLoopOptions options = SmallRun();
    options.devices = devices.options();
    options.batch_size = 8 * devices.count;
    options.synthetic_test_examples = 96;
    options.test_batch_size = 96;
    TrainingLoop plain(options);
    options.memory_plan = true;
    options.recompute = false;  // the same nets as plain's: only the memory differs
    TrainingLoop planned(options);
    const int64_t extra = planned.test_memory()->allocated_bytes();
    EXPECT_GT(extra, 0);  // it grew
    EXPECT_LT(extra, planned.test_memory()->plan().arena_bytes());
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < 2; ++i) EXPECT_EQ(plain.Step(), planned.Step()) << "round " << round;
      const Evaluation p = plain.Evaluate(), q = planned.Evaluate();
      EXPECT_EQ(p.accuracy, q.accuracy) << "round " << round;
      EXPECT_EQ(p.loss, q.loss) << "round " << round;
    }
    for (const std::string& name : plain.nets().CheckpointBlobs()) {
      EXPECT_EQ(HostBytes(*plain.workspace().GetBlob(name)),
                HostBytes(*planned.workspace().GetBlob(name)))
          << name;
    }
  }
}

// braid_train --batch-size 32 (test batch 100) on Fashion-MNIST's shape: on every device list the
// test net needs at least 80% less beside the train net than alone. Data parallel, each device's
// train arena (batch 16) is smaller than the test net's (batch 100 on the first device).
TEST_F(TrainerTest, SharedTestNetNeedsAtLeast80PercentLessThanAloneAtBatch32) {
  for (const DeviceList& devices : {DeviceList{DeviceType::kCpu, 1},
                                    {DeviceType::kCpu, 2},
                                    {DeviceType::kSim, 1},
                                    {DeviceType::kSim, 2}}) {
    TrainingLoopOptions options;
    options.data = "synthetic";
    options.synthetic_examples = 100;
    options.synthetic_test_examples = 100;
    options.batch_size = 32;
    options.test_batch_size = 100;
    options.iters = 1;
    options.memory_plan = true;
    options.devices = devices.options();
    const TrainingLoop trainer(options);
    const double alone = static_cast<double>(trainer.test_memory()->plan().arena_bytes());
    const double extra = static_cast<double>(trainer.test_memory()->allocated_bytes());
    const double less = 1 - extra / alone;
    std::cout << devices.name() << ": test net extra " << extra << " B shared, " << alone
              << " B alone (" << 100 * less << "% less)\n";
    EXPECT_GE(less, 0.8) << devices.name();
  }
}

TEST_F(TrainerTest, RunLogsProgressEvaluatesAndCheckpointsEachEpoch) {
  TrainingLoopOptions options = SmallRun();
  options.iters = 0;
  options.epochs = 2;  // 6 iterations each
  options.log_every = 4;
  options.checkpoint = (dir_ / "run.pbtxt").string();
  TrainingLoop trainer(options);
  std::ostringstream log;
  trainer.Run(log);
  const std::string text = log.str();
  for (const char* line :
       {"model resnet20", "iter 4/12 epoch 1 loss ", "iter 6/12 epoch 1", "epoch 1 test accuracy",
        "epoch 2 test accuracy", "images/s", "saved at iter 12", "done: 12 iterations"}) {
    EXPECT_NE(text.find(line), std::string::npos) << "no '" << line << "' in:\n" << text;
  }
  EXPECT_TRUE(fs::exists(options.checkpoint));
}

TEST_F(TrainerTest, CheckpointOfAnotherModelOrMissingFileIsRefused) {
  TrainingLoopOptions options = SmallRun();
  TrainingLoop trainer(options);
  const std::string path = (dir_ / "r20.pb").string();
  trainer.SaveCheckpoint(path);
  options.model = "resnet32";
  options.checkpoint = path;
  options.resume = true;
  Status s = StatusFromCall([&] { TrainingLoop other(options); });
  EXPECT_NE(s.message().find("was written for model 'resnet20', not 'resnet32'"), std::string::npos)
      << s.ToString();
  options.checkpoint = (dir_ / "absent.pb").string();
  s = StatusFromCall([&] { TrainingLoop other(options); });
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("absent.pb"), std::string::npos) << s.ToString();
}

TEST(CheckpointTest, TensorProtosRoundTripEveryType) {
  Tensor f(DType::kFloat32, {2, 2});
  std::vector<float> fv = {1.5f, -2.f, 0.f, 3.25f};
  std::copy(fv.begin(), fv.end(), f.mutable_data<float>());
  Tensor i(DType::kInt64, {1});
  i.mutable_data<int64_t>()[0] = int64_t{1} << 40;
  for (const Tensor* t : {&f, &i}) {
    Tensor back;
    FromTensorProto(ToTensorProto("x", *t), &back);
    EXPECT_EQ(back.shape(), t->shape());
    EXPECT_EQ(back.dtype(), t->dtype());
    EXPECT_EQ(std::memcmp(back.raw_data(), t->raw_data(), t->nbytes()), 0);
  }
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

// The public Trainer (include/braid/trainer.h) on synthetic data: what it reports, that it is the
// library's training loop, checkpoints, two devices, and errors as a Status.
TrainerOptions SmallPublicRun() {
  TrainerOptions o;
  o.model = "resnet20";
  o.data = "synthetic";
  o.batch_size = 16;
  o.iterations = 12;
  o.progress_every = 4;
  o.learning_rate = 0.02;
  o.seed = 3;
  return o;
}

TEST(PublicTrainerTest, ReportsProgressAndTheFinalEvaluation) {
  std::vector<TrainingProgress> reports;
  TrainerOptions o = SmallPublicRun();
  o.on_progress = [&](const TrainingProgress& p) { reports.push_back(p); };
  std::unique_ptr<Trainer> trainer;
  Status s = Trainer::Create(o, &trainer);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(trainer->total_iterations(), 12);
  TrainingProgress last;
  s = trainer->Run(&last);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(trainer->iteration(), 12);
  ASSERT_EQ(reports.size(), 4u);  // iterations 4, 8, 12, then the evaluation
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(reports[i].iteration, 4 * (i + 1));
    EXPECT_FALSE(reports[i].evaluated);
    EXPECT_TRUE(std::isfinite(reports[i].loss) && reports[i].loss > 0);
    EXPECT_GE(reports[i].learning_rate, 0);
    EXPECT_GT(reports[i].images_per_second, 0);
  }
  EXPECT_GT(reports[0].learning_rate, reports[1].learning_rate);  // the cosine schedule
  EXPECT_TRUE(reports[3].evaluated);
  EXPECT_TRUE(last.evaluated);
  EXPECT_EQ(last.test_accuracy, reports[3].test_accuracy);
  EXPECT_GE(last.test_accuracy, 0);
  EXPECT_LE(last.test_accuracy, 1);

  // The same run through the library's training loop evaluates to the same numbers.
  TrainingLoopOptions loop;
  loop.model = "resnet20";
  loop.data = "synthetic";
  loop.batch_size = 16;
  loop.iters = 12;
  loop.seed = 3;
  loop.optimizer.lr.base_lr = 0.02f;
  loop.memory_plan = true;
  loop.optimizer.momentum = 0.9f;
  loop.optimizer.weight_decay = 1e-4f;
  std::ostringstream log;
  const Evaluation direct = TrainingLoop(loop).Run(log);
  EXPECT_EQ(direct.accuracy, last.test_accuracy);
  EXPECT_EQ(direct.loss, last.test_loss);
}

TEST(PublicTrainerTest, ResumesFromItsCheckpointOnTwoDevices) {
  const std::string checkpoint = ::testing::TempDir() + "/public_trainer_" +
                                 std::to_string(::getpid()) + ".pb";
  TrainerOptions o = SmallPublicRun();
  o.devices = {"cpu:0", "cpu:1"};
  o.evaluate = false;
  o.iterations = 6;
  o.checkpoint = checkpoint;
  std::unique_ptr<Trainer> first;
  ASSERT_TRUE(Trainer::Create(o, &first).ok());
  ASSERT_TRUE(first->Run().ok());
  double loss = 0;
  o.iterations = 8;
  o.resume = true;
  std::unique_ptr<Trainer> resumed;
  Status s = Trainer::Create(o, &resumed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(resumed->iteration(), 6);
  ASSERT_TRUE(resumed->Step(&loss).ok());
  EXPECT_EQ(resumed->iteration(), 7);
  EXPECT_TRUE(std::isfinite(loss));
  double accuracy = -1;
  ASSERT_TRUE(resumed->Evaluate(&accuracy, &loss).ok());
  EXPECT_GE(accuracy, 0);
  std::filesystem::remove(checkpoint);
}

TEST(PublicTrainerTest, BadOptionsAreAStatus) {
  std::unique_ptr<Trainer> trainer;
  TrainerOptions o = SmallPublicRun();
  o.model = "resnet7";
  Status s = Trainer::Create(o, &trainer);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown model 'resnet7'"), std::string::npos) << s.message();
  o = SmallPublicRun();
  o.devices = {};
  EXPECT_EQ(Trainer::Create(o, &trainer).code(), StatusCode::kInvalidArgument);
  o = SmallPublicRun();
  o.devices = {"tpu:0"};
  EXPECT_FALSE(Trainer::Create(o, &trainer).ok());
  o = SmallPublicRun();
  o.data = "fashion-mnist";
  o.data_dir = ::testing::TempDir() + "/no_such_dataset";
  s = Trainer::Create(o, &trainer);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no_such_dataset"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace braid
