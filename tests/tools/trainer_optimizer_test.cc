// The trainer's optimizers other than momentum SGD (runtime/models/training_nets.h): the nets
// BuildTrainingNets emits for Adam, AdamW and Adagrad, one TrainingLoop step of each against the
// same step computed here in double from the gradient the net produced, training, and resuming
// with the optimizers' state; and the learning-rate policies the trainer passes to LearningRate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/core/tensor.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_nets.h"
#include "runtime/train/training_loop.h"
#include "testing/small_training.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

TrainingNetsSpec ResNet20Spec(const std::string& optimizer) {
  TrainingNetsSpec spec;
  spec.name = "resnet20";
  spec.forward = [](ModelBuilder* b, const std::string& data) {
    return AddResNet(b, ResNetSpecFromName("resnet20", 1, 10), data);
  };
  spec.train_input = SyntheticImageReader({8, 1, 28, 10}, "train_reader");
  spec.test_input = SyntheticImageReader({8, 1, 28, 10}, "test_reader");
  spec.optimizer.type = optimizer;
  spec.optimizer.lr.max_iter = 100;
  return spec;
}

const Argument* FindArg(const OperatorDef& op, const std::string& name) {
  for (const Argument& arg : op.arg()) {
    if (arg.name() == name) return &arg;
  }
  return nullptr;
}

const OperatorDef& OnlyOp(const NetDef& net, const std::string& type) {
  const OperatorDef* found = nullptr;
  for (const OperatorDef& op : net.op()) {
    if (op.type() == type) {
      EXPECT_EQ(found, nullptr) << "a second " << type;
      found = &op;
    }
  }
  EXPECT_NE(found, nullptr) << "no " << type;
  return *found;
}

TEST(OptimizerNetsTest, AdamUpdatesEveryTrainedParameterInPlaceWithANegativeRate) {
  for (const std::string optimizer : {"adam", "adamw"}) {
    SCOPED_TRACE(optimizer);
    const TrainingNets nets = BuildTrainingNets(ResNet20Spec(optimizer));
    int updates = 0;
    for (const OperatorDef& op : nets.train.op()) {
      if (op.type() != "Adam") continue;
      ++updates;
      ASSERT_EQ(op.input_size(), 6);
      ASSERT_EQ(op.output_size(), 3);
      const ParamInfo* p = nets.params.Find(op.input(0));
      ASSERT_NE(p, nullptr) << op.input(0);
      EXPECT_TRUE(p->trainable());
      EXPECT_EQ(op.input(1), p->name + "_first_moment");
      EXPECT_EQ(op.input(2), p->name + "_second_moment");
      EXPECT_EQ(op.input(4), nets.lr);
      EXPECT_EQ(op.input(5), nets.iter);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(op.output(i), op.input(i));
      EXPECT_EQ(FindArg(op, "weight_decay")->f(), p->weight_decay() ? 1e-4f : 0.f);
      EXPECT_EQ(FindArg(op, "decoupled")->i(), optimizer == "adamw" ? 1 : 0);
      EXPECT_EQ(FindArg(op, "epsilon")->f(), 1e-8f);
    }
    int64_t trainable = 0;
    for (const ParamInfo& p : nets.params.params) trainable += p.trainable() ? 1 : 0;
    EXPECT_EQ(updates, trainable);
    EXPECT_EQ(CountOps(nets.train, "MomentumSGDUpdate"), 0);
    EXPECT_EQ(nets.optimizer_blobs.size(), 2u * trainable);
    EXPECT_EQ(nets.CheckpointBlobs().size(), nets.params.params.size() + 2 * trainable + 1);
    EXPECT_EQ(FindArg(OnlyOp(nets.train, "LearningRate"), "base_lr")->f(), -0.1f);
  }
}

TEST(OptimizerNetsTest, AdagradKeepsASquaredSumPerParameter) {
  const TrainingNets nets = BuildTrainingNets(ResNet20Spec("adagrad"));
  int updates = 0;
  for (const OperatorDef& op : nets.train.op()) {
    if (op.type() != "Adagrad") continue;
    ++updates;
    ASSERT_EQ(op.input_size(), 4);
    EXPECT_EQ(op.input(1), op.input(0) + "_squared_sum");
    EXPECT_EQ(op.input(3), nets.lr);
  }
  EXPECT_EQ(static_cast<size_t>(updates), nets.optimizer_blobs.size());
  EXPECT_EQ(FindArg(OnlyOp(nets.train, "LearningRate"), "base_lr")->f(), -0.1f);
}

TEST(OptimizerNetsTest, PoliciesPassTheirArgumentsAndBadOnesAreNamed) {
  TrainingNetsSpec spec = ResNet20Spec("momentum");
  spec.optimizer.lr.policy = "multistep";
  spec.optimizer.lr.stepsizes = {10, 30};
  spec.optimizer.lr.gamma = 0.5f;
  OperatorDef lr = OnlyOp(BuildTrainingNets(spec).train, "LearningRate");
  EXPECT_EQ(FindArg(lr, "policy")->s(), "multistep");
  EXPECT_EQ(std::vector<int64_t>(FindArg(lr, "stepsizes")->ints().begin(),
                                 FindArg(lr, "stepsizes")->ints().end()),
            (std::vector<int64_t>{10, 30}));
  EXPECT_EQ(FindArg(lr, "gamma")->f(), 0.5f);
  EXPECT_EQ(FindArg(lr, "base_lr")->f(), 0.1f);  // momentum SGD subtracts: a positive rate

  spec.optimizer.lr.policy = "poly";
  spec.optimizer.lr.power = 2;
  lr = OnlyOp(BuildTrainingNets(spec).train, "LearningRate");
  EXPECT_EQ(FindArg(lr, "power")->f(), 2.f);
  EXPECT_EQ(FindArg(lr, "max_iter")->i(), 100);

  auto error = [&](TrainingNetsSpec s) {
    return StatusFromCall([&] { BuildTrainingNets(s); }).message();
  };
  TrainingNetsSpec bad = ResNet20Spec("rmsprop");
  EXPECT_NE(error(bad).find("unknown optimizer 'rmsprop' (momentum, adam, adamw or adagrad)"),
            std::string::npos);
  bad = ResNet20Spec("adam");
  bad.optimizer.beta2 = 1;
  EXPECT_NE(error(bad).find("beta1 and beta2 must be in [0, 1)"), std::string::npos);
  bad = ResNet20Spec("adam");
  bad.optimizer.lr.policy = "multistep";
  EXPECT_NE(error(bad).find("policy 'multistep' needs stepsizes"), std::string::npos);
}

class OptimizerLoopTest : public ::testing::TestWithParam<std::string> {
 protected:
  // ResNet-20 on 12x12 synthetic images; memory_plan off, so gradients stay readable.
  static TrainingLoopOptions SmallRun(const std::string& optimizer) {
    TrainingLoopOptions o = SmallPlainTraining(/*seed=*/3);
    o.iters = 30;
    o.optimizer.type = optimizer;
    o.optimizer.lr.base_lr = optimizer == "adagrad" ? 0.05f : 0.005f;
    o.optimizer.weight_decay = 0.01f;  // large enough to show in a step
    return o;
  }
};

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.data<float>()[i];
  return v;
}

// Steps twice, then checks the second step of every updated parameter against Adam's or
// Adagrad's formula in double, from the parameter and state before it and the net's gradient.
TEST_P(OptimizerLoopTest, AStepIsTheFormulaAppliedToTheNetsGradient) {
  const std::string optimizer = GetParam();
  const TrainingLoopOptions options = SmallRun(optimizer);
  TrainingLoop loop(options);
  loop.Step();
  std::map<std::string, std::vector<double>> before;
  for (const ParamInfo& p : loop.nets().params.params) {
    before[p.name] = Values(*loop.workspace().GetBlob(p.name));
  }
  for (const std::string& s : loop.nets().optimizer_blobs) {
    before[s] = Values(*loop.workspace().GetBlob(s));
  }
  loop.Step();
  const double lr = options.optimizer.lr.base_lr;  // descent: the nets add -lr times the step
  // The op's arguments are float: compute with their float values.
  const double beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
  const double t = 2 + 1;  // Caffe2's Adam: iter + 1, and Iter has counted 2 steps
  const double correction = std::sqrt(1 - std::pow(beta2, t)) / (1 - std::pow(beta1, t));
  int checked = 0;
  for (const OperatorDef& op : loop.nets().train.op()) {
    if (op.type() != "Adam" && op.type() != "Adagrad") continue;
    const std::string& param = op.input(0);
    const ParamInfo* info = loop.nets().params.Find(param);
    const double wd = info->weight_decay() ? options.optimizer.weight_decay : 0;
    const std::vector<double> g =
        Values(*loop.workspace().GetBlob(op.input(op.input_size() == 6 ? 3 : 2)));
    const std::vector<double> w = Values(*loop.workspace().GetBlob(param));
    const std::vector<double>& w0 = before[param];
    const bool adagrad = op.type() == "Adagrad";
    const std::vector<double>& moment = before.at(op.input(1));  // m1, or Adagrad's squared sum
    const std::vector<double>& moment2 = adagrad ? moment : before.at(op.input(2));
    for (size_t i = 0; i < w.size(); ++i) {
      double expected = 0;
      double terms = 0;  // the step's size before any cancellation inside it
      if (adagrad) {
        const double gi = g[i] + wd * w0[i];
        const double h = moment[i] + gi * gi;
        expected = w0[i] - lr * gi / (std::sqrt(h) + epsilon);
        terms = lr * (std::abs(g[i]) + std::abs(wd * w0[i])) / (std::sqrt(h) + epsilon);
      } else {
        const double gi = optimizer == "adamw" ? g[i] : g[i] + wd * w0[i];
        const double m1 = beta1 * moment[i] + (1 - beta1) * gi;
        const double m2 = beta2 * moment2[i] + (1 - beta2) * gi * gi;
        expected = w0[i] - lr * correction * m1 / (std::sqrt(m2) + epsilon);
        // m1' sums two terms that may nearly cancel: float rounds each of them.
        terms = lr * correction *
                (std::abs(beta1 * moment[i]) + std::abs((1 - beta1) * gi) + std::abs(wd * w0[i])) /
                (std::sqrt(m2) + epsilon);
        if (optimizer == "adamw") expected -= lr * wd * w0[i];
      }
      // float rounding: of the step's terms, of the parameter it is added to, and of the sum
      const double tolerance = 1e-6 * (terms + std::abs(w0[i])) + 2e-6 * std::abs(expected);
      ASSERT_NEAR(w[i], expected, tolerance) << op.type() << " of " << param << "[" << i << "]";
    }
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

TEST_P(OptimizerLoopTest, TrainsAndResumesBitForBit) {
  TrainingLoopOptions options = SmallRun(GetParam());
  TrainingLoop loop(options);
  std::vector<float> losses;
  while (loop.iteration() < 16) losses.push_back(loop.Step());
  const double first = (losses[0] + losses[1] + losses[2]) / 3;
  const double last = (losses[13] + losses[14] + losses[15]) / 3;
  EXPECT_LT(last, 0.7 * first) << "loss went from " << first << " to " << last;

  const fs::path path = fs::temp_directory_path() /
                        ("braid_optimizer_" + std::to_string(::getpid()) + GetParam() + ".pb");
  loop.SaveCheckpoint(path.string());
  options.checkpoint = path.string();
  options.resume = true;
  TrainingLoop resumed(options);
  fs::remove(path);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(loop.Step(), resumed.Step()) << "step " << i;
  for (const std::string& name : loop.nets().CheckpointBlobs()) {
    const Tensor& x = *loop.workspace().GetBlob(name);
    const Tensor& y = *resumed.workspace().GetBlob(name);
    ASSERT_EQ(std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()), 0) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, OptimizerLoopTest,
                         ::testing::Values("adam", "adamw", "adagrad"));

}  // namespace
}  // namespace braid
