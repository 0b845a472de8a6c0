// The public Trainer (include/braid/trainer.h) on the application's own nets (TrainerOptions::net):
// NetDefs built here with the protobuf API alone, trained on synthetic data.
#include "braid/trainer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {
namespace {

OperatorDef* AddOp(NetDef* net, const std::string& type, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs) {
  OperatorDef* op = net->add_op();
  op->set_type(type);
  for (const std::string& in : inputs) op->add_input(in);
  for (const std::string& out : outputs) op->add_output(out);
  return op;
}

void AddInt(OperatorDef* op, const std::string& name, int64_t value) {
  Argument* arg = op->add_arg();
  arg->set_name(name);
  arg->set_i(value);
}

void Fill(NetDef* init, const std::string& type, const std::string& blob,
          const std::vector<int64_t>& shape, float value = 0.f) {
  OperatorDef* op = AddOp(init, type, {}, {blob});
  Argument* arg = op->add_arg();
  arg->set_name("shape");
  for (int64_t d : shape) arg->add_ints(d);
  if (type == "ConstantFill") {
    Argument* v = op->add_arg();
    v->set_name("value");
    v->set_f(value);
  }
}

struct Nets {
  NetDef init, forward;
};

// data [N, 1, 12, 12] -> FC 32 -> Relu -> FC 4 -> logits.
Nets Mlp() {
  Nets m;
  m.init.set_name("mlp_init");
  m.forward.set_name("mlp");
  Fill(&m.init, "XavierFill", "fc1_w", {32, 144});
  AddInt(m.init.mutable_op(0), "seed", 7);  // an explicit seed, kept on every device
  Fill(&m.init, "ConstantFill", "fc1_b", {32});
  Fill(&m.init, "XavierFill", "fc2_w", {4, 32});
  Fill(&m.init, "ConstantFill", "fc2_b", {4});
  AddOp(&m.forward, "FC", {"data", "fc1_w", "fc1_b"}, {"fc1"});
  AddOp(&m.forward, "Relu", {"fc1"}, {"fc1"});
  AddOp(&m.forward, "FC", {"fc1", "fc2_w", "fc2_b"}, {"logits"});
  m.forward.add_external_output("logits");
  return m;
}

// data [N, 1, 12, 12] -> Conv 3x3 stride 2, 8 -> SpatialBN (training form) -> Relu -> FC 4.
Nets SmallCnn() {
  Nets m;
  m.init.set_name("cnn_init");
  m.forward.set_name("cnn");
  Fill(&m.init, "MSRAFill", "conv_w", {8, 1, 3, 3});
  Fill(&m.init, "ConstantFill", "bn_s", {8}, 1.f);
  Fill(&m.init, "ConstantFill", "bn_b", {8});
  Fill(&m.init, "ConstantFill", "bn_rm", {8});
  Fill(&m.init, "ConstantFill", "bn_riv", {8}, 1.f);
  Fill(&m.init, "XavierFill", "fc_w", {4, 8 * 6 * 6});
  Fill(&m.init, "ConstantFill", "fc_b", {4});
  OperatorDef* conv = AddOp(&m.forward, "Conv", {"data", "conv_w"}, {"conv"});
  AddInt(conv, "kernel", 3);
  AddInt(conv, "stride", 2);
  AddInt(conv, "pad", 1);
  AddOp(&m.forward, "SpatialBN", {"conv", "bn_s", "bn_b", "bn_rm", "bn_riv"},
        {"bn", "bn_rm", "bn_riv", "bn_sm", "bn_siv"});
  AddOp(&m.forward, "Relu", {"bn"}, {"relu"});
  AddOp(&m.forward, "FC", {"relu", "fc_w", "fc_b"}, {"scores"});
  return m;
}

TrainerOptions SyntheticRun(const Nets& nets) {
  TrainerOptions o;
  o.net = {&nets.init, &nets.forward};
  o.data = "synthetic";
  o.synthetic = {.examples = 256, .test_examples = 128, .channels = 1, .image_size = 12,
                 .classes = 4};
  o.batch_size = 32;
  o.test_batch_size = 64;
  o.iterations = 40;
  o.learning_rate = 0.05;
  o.learning_rate_policy.policy = "fixed";
  o.seed = 5;
  return o;
}

std::unique_ptr<Trainer> Create(const TrainerOptions& o) {
  std::unique_ptr<Trainer> trainer;
  const Status s = Trainer::Create(o, &trainer);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return trainer;
}

std::vector<double> Steps(Trainer* trainer, int n) {
  std::vector<double> losses;
  for (int i = 0; i < n; ++i) {
    double loss = 0;
    const Status s = trainer->Step(&loss);
    EXPECT_TRUE(s.ok()) << s.ToString();
    losses.push_back(loss);
  }
  return losses;
}

double Mean(const std::vector<double>& v, size_t begin, size_t end) {
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += v[i];
  return sum / static_cast<double>(end - begin);
}

TEST(PublicTrainerTest, ApplicationMlpLearnsSeparableSyntheticData) {
  const Nets mlp = Mlp();
  std::unique_ptr<Trainer> trainer = Create(SyntheticRun(mlp));
  ASSERT_NE(trainer, nullptr);
  double accuracy = 0, loss = 0;
  ASSERT_TRUE(trainer->Evaluate(&accuracy, &loss).ok());
  const double untrained_accuracy = accuracy;
  const std::vector<double> losses = Steps(trainer.get(), 40);
  EXPECT_LT(Mean(losses, 35, 40), 0.5 * Mean(losses, 0, 5));
  ASSERT_TRUE(trainer->Evaluate(&accuracy, &loss).ok());
  std::cout << "test accuracy " << untrained_accuracy << " untrained, " << accuracy
            << " after 40 steps (4 classes: chance 0.25)\n";
  EXPECT_GT(accuracy, 0.75);
  EXPECT_GT(accuracy, untrained_accuracy + 0.3);
}

TEST(PublicTrainerTest, ApplicationCnnTrainsItsWeightsAndKeepsBatchNormStateUntrained) {
  const Nets cnn = SmallCnn();
  TrainerOptions o = SyntheticRun(cnn);
  o.net.logits = "scores";
  std::unique_ptr<Trainer> trainer = Create(o);
  ASSERT_NE(trainer, nullptr);
  std::map<std::string, float> decay;  // updated parameter -> its weight decay
  for (const OperatorDef& op : trainer->train_net().op()) {
    if (op.type() != "MomentumSGDUpdate") continue;
    for (const Argument& arg : op.arg()) {
      if (arg.name() == "weight_decay") decay[op.input(3)] = arg.f();
    }
  }
  const float wd = static_cast<float>(o.weight_decay);
  EXPECT_EQ(decay, (std::map<std::string, float>{
                       {"conv_w", wd}, {"bn_s", 0}, {"bn_b", 0}, {"fc_w", wd}, {"fc_b", 0}}));
  int test_bn = 0;
  for (const OperatorDef& op : trainer->test_net().op()) {
    for (const std::string& out : op.output()) EXPECT_EQ(out.rfind("test/", 0), 0u) << out;
    if (op.type() != "SpatialBN") continue;
    ++test_bn;
    EXPECT_EQ(op.output_size(), 1);
    bool is_test = false;
    for (const Argument& arg : op.arg()) is_test |= arg.name() == "is_test" && arg.i() == 1;
    EXPECT_TRUE(is_test);
  }
  EXPECT_EQ(test_bn, 1);
  const std::vector<double> losses = Steps(trainer.get(), 40);
  EXPECT_LT(Mean(losses, 35, 40), 0.5 * Mean(losses, 0, 5));
  double accuracy = 0, loss = 0;
  ASSERT_TRUE(trainer->Evaluate(&accuracy, &loss).ok());
  EXPECT_GT(accuracy, 0.75);  // 4 classes: chance 0.25
}

TEST(PublicTrainerTest, ApplicationNetOnTwoDevicesMatchesOneDeviceForTheSameGlobalBatch) {
  const Nets mlp = Mlp();
  TrainerOptions o = SyntheticRun(mlp);
  std::unique_ptr<Trainer> one = Create(o);
  o.devices = {"cpu:0", "cpu:1"};
  std::unique_ptr<Trainer> two = Create(o);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  const std::vector<double> a = Steps(one.get(), 10), b = Steps(two.get(), 10);
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(b[i], a[i], 1e-5 + 1e-4 * std::fabs(a[i])) << i;
  double accuracy_one = 0, loss_one = 0, accuracy_two = 0, loss_two = 0;
  ASSERT_TRUE(one->Evaluate(&accuracy_one, &loss_one).ok());
  ASSERT_TRUE(two->Evaluate(&accuracy_two, &loss_two).ok());
  EXPECT_NEAR(loss_two, loss_one, 1e-4 * loss_one);
  EXPECT_EQ(accuracy_two, accuracy_one);
}

TEST(PublicTrainerTest, ApplicationNetResumesFromItsCheckpointExactly) {
  const std::string checkpoint =
      ::testing::TempDir() + "/trainer_net_" + std::to_string(::getpid()) + ".pb";
  const Nets cnn = SmallCnn();
  TrainerOptions o = SyntheticRun(cnn);
  o.net.logits = "scores";
  o.iterations = 8;
  std::unique_ptr<Trainer> original = Create(o);
  ASSERT_NE(original, nullptr);
  Steps(original.get(), 4);
  ASSERT_TRUE(original->SaveCheckpoint(checkpoint).ok());
  const std::vector<double> continued = Steps(original.get(), 4);

  o.checkpoint = checkpoint;
  o.resume = true;
  std::unique_ptr<Trainer> resumed = Create(o);
  ASSERT_NE(resumed, nullptr);
  EXPECT_EQ(resumed->iteration(), 4);
  EXPECT_EQ(Steps(resumed.get(), 4), continued);  // bit for bit
  double a = 0, b = 0, loss_a = 0, loss_b = 0;
  ASSERT_TRUE(original->Evaluate(&a, &loss_a).ok());
  ASSERT_TRUE(resumed->Evaluate(&b, &loss_b).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(loss_a, loss_b);

  // A checkpoint names its model: the MLP refuses the CNN's.
  const Nets mlp = Mlp();
  TrainerOptions other = SyntheticRun(mlp);
  other.checkpoint = checkpoint;
  other.resume = true;
  std::unique_ptr<Trainer> refused;
  const Status s = Trainer::Create(other, &refused);
  EXPECT_NE(s.message().find("'cnn'"), std::string::npos) << s.ToString();
  std::filesystem::remove(checkpoint);
}

// Create's Status for `nets` (SyntheticRun's options) contains every one of `parts`.
void ExpectRefused(const Nets& nets, const std::vector<std::string>& parts,
                   const std::string& logits = "") {
  TrainerOptions o = SyntheticRun(nets);
  o.net.logits = logits;
  std::unique_ptr<Trainer> trainer;
  const Status s = Trainer::Create(o, &trainer);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  for (const std::string& part : parts) {
    EXPECT_NE(s.message().find(part), std::string::npos) << "no '" << part << "' in "
                                                         << s.ToString();
  }
}

TEST(PublicTrainerTest, ApplicationNetsThatCannotTrainAreAStatusNamingNetAndBlob) {
  Nets no_input = Mlp();
  no_input.forward.mutable_op(0)->set_input(0, "pixels");
  ExpectRefused(no_input, {"net 'mlp'", "op #0 (FC", "'pixels'", "init net 'mlp_init'"});

  Nets reads_no_images = Mlp();
  reads_no_images.forward.mutable_op(0)->set_input(0, "fc2_b");  // a parameter instead
  ExpectRefused(reads_no_images, {"forward net 'mlp'", "does not read the input blob 'data'"});

  ExpectRefused(Mlp(), {"forward net 'mlp'", "does not write its logits blob 'probs'"}, "probs");
  Nets two_outputs = Mlp();
  two_outputs.forward.add_external_output("fc1");
  ExpectRefused(two_outputs, {"forward net 'mlp'", "names no logits blob"});

  Nets unfilled = Mlp();
  unfilled.init.mutable_op()->RemoveLast();  // fc2_b
  ExpectRefused(unfilled, {"net 'mlp' op #2 (FC", "reads 'fc2_b'", "init net 'mlp_init'"});

  Nets unread = Mlp();
  Fill(&unread.init, "ConstantFill", "fc3_w", {4});
  ExpectRefused(unread, {"init net 'mlp_init' fills 'fc3_w'", "forward net 'mlp' does not read"});

  const Nets mlp = Mlp();
  TrainerOptions o = SyntheticRun(mlp);
  o.net.init = nullptr;
  std::unique_ptr<Trainer> trainer;
  EXPECT_EQ(Trainer::Create(o, &trainer).code(), StatusCode::kInvalidArgument);
}

TEST(PublicTrainerTest, ImagesOfAnotherShapeThanTheApplicationNetTakesAreAStatus) {
  // The 12x12 MLP on 28x28 images: the first FC's weights do not fit.
  const Nets mlp = Mlp();
  TrainerOptions o = SyntheticRun(mlp);
  o.synthetic.image_size = 28;
  std::unique_ptr<Trainer> trainer;
  Status s = Trainer::Create(o, &trainer);
  if (s.ok()) s = trainer->Step();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("FC"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace braid
