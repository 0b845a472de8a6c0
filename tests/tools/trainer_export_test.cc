// Trainer::Export (runtime/train/model_export.h): a trained model written as a Caffe2 model-zoo
// folder, loaded back by the Predictor, answers exactly as the trainer's test net did for the same
// images; the folder's nets are what Caffe2 users expect (GivenTensorFill init net, is_test ops,
// value_info.json), and errors come back as a Status.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "braid/predictor.h"
#include "braid/status.h"
#include "braid/trainer.h"
#include "runtime/device/algorithm_registry.h"
#include "runtime/io/model_folder.h"
#include "runtime/train/model_export.h"
#include "runtime/train/training_loop.h"
#include "testing/small_training.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

class TrainerExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braid_export_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    // The Predictor packs Conv filters, which the algorithm search keys apart from plain ones:
    // the rule mode makes both pick the same convolution algorithm, whatever the timings.
    mode_ = AlgorithmRegistry::Global().mode();
    AlgorithmRegistry::Global().set_mode(SearchMode::kRule);
  }
  void TearDown() override {
    AlgorithmRegistry::Global().set_mode(mode_);
    fs::remove_all(dir_);
  }

  // The shared small run, on one cpu device with the simple executor and no memory plan, so the
  // test net's last batch stays readable after Evaluate.
  static TrainingLoopOptions SmallRun() {
    TrainingLoopOptions o = SmallPlainTraining(/*seed=*/5);
    o.synthetic_test_examples = 32;
    o.iters = 6;
    return o;
  }

  fs::path dir_;
  SearchMode mode_ = SearchMode::kMeasure;
};

TEST_F(TrainerExportTest, TheServedModelAnswersBitForBitAsTheTestNet) {
  TrainingLoop loop(SmallRun());
  while (loop.iteration() < loop.total_iterations()) loop.Step();
  ASSERT_TRUE(WriteModelFolder(dir_.string(), ExportedModel(loop)).ok());
  loop.Evaluate();  // leaves its last test batch and the softmax of it in the test workspace
  const Tensor& images = *loop.test_workspace().GetBlob("test/data");
  const Tensor& softmax = *loop.test_workspace().GetBlob("test/softmax");

  PredictorOptions options;
  options.optimize_graph = false;  // folding batch norm into the convolutions changes rounding
  std::unique_ptr<Predictor> predictor;
  const Status loaded = Predictor::FromModelFolder(dir_.string(), options, &predictor);
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  EXPECT_EQ(predictor->input_names(), std::vector<std::string>{"data"});
  EXPECT_EQ(predictor->output_names(), std::vector<std::string>{"softmax"});
  std::map<std::string, OutputTensor> outputs;
  const Status s =
      predictor->Run({{"data", InputView::Of(images.data<float>(), images.shape())}}, &outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const OutputTensor& served = outputs.at("softmax");
  ASSERT_EQ(served.shape, softmax.shape());
  EXPECT_EQ(std::memcmp(served.data<float>(), softmax.data<float>(), softmax.nbytes()), 0)
      << "the exported model answers otherwise than the test net";

  // With the graph optimised (batch norm folded), within rounding.
  options.optimize_graph = true;
  ASSERT_TRUE(Predictor::FromModelFolder(dir_.string(), options, &predictor).ok());
  ASSERT_TRUE(
      predictor->Run({{"data", InputView::Of(images.data<float>(), images.shape())}}, &outputs)
          .ok());
  for (int64_t i = 0; i < softmax.numel(); ++i) {
    ASSERT_NEAR(outputs.at("softmax").data<float>()[i], softmax.data<float>()[i], 1e-5) << i;
  }
}

TEST_F(TrainerExportTest, TheFolderHoldsZooNetsOfGivenTensorFillsAndInferenceOps) {
  TrainingLoop loop(SmallRun());
  loop.Step();
  ASSERT_TRUE(WriteModelFolder(dir_.string(), ExportedModel(loop)).ok());
  ModelFolder model;
  ASSERT_TRUE(LoadModelFolder(dir_.string(), &model).ok());
  ASSERT_EQ(model.inputs.size(), 1u);
  EXPECT_EQ(model.inputs[0].name, "data");
  EXPECT_EQ(model.inputs[0].shape, (std::vector<int64_t>{1, 1, 12, 12}));
  EXPECT_EQ(model.predict_net.name(), "resnet20");
  ASSERT_GT(model.init_net.op_size(), 0);
  for (const OperatorDef& op : model.init_net.op()) {
    EXPECT_EQ(op.type(), "GivenTensorFill") << op.output(0);
  }
  // Every parameter, and nothing of training: no reader, loss, gradient or update, no device.
  EXPECT_EQ(model.init_net.op_size(), static_cast<int>(loop.nets().params.params.size()));
  int batch_norms = 0;
  for (const OperatorDef& op : model.predict_net.op()) {
    EXPECT_FALSE(op.is_gradient_op()) << op.type();
    EXPECT_FALSE(op.has_device_option()) << op.type();
    for (const char* training :
         {"IdxImageInput", "SoftmaxWithLoss", "Accuracy", "Iter", "MomentumSGDUpdate"}) {
      EXPECT_NE(op.type(), training);
    }
    if (op.type() == "SpatialBN") {
      ++batch_norms;
      EXPECT_EQ(op.output_size(), 1);
      bool is_test = false;
      for (const Argument& arg : op.arg()) is_test |= arg.name() == "is_test" && arg.i() == 1;
      EXPECT_TRUE(is_test) << op.name();
    }
  }
  EXPECT_GT(batch_norms, 0);
  EXPECT_EQ(batch_norms, CountOps(loop.nets().test, "SpatialBN"));
  EXPECT_EQ(model.predict_net.op(model.predict_net.op_size() - 1).type(), "Softmax");
}

TEST_F(TrainerExportTest, TheTrainerExportsThroughThePublicApiAndNamesAnUnwritableFolder) {
  TrainerOptions options;
  options.model = "resnet20";
  options.data = "synthetic";
  options.synthetic.examples = 32;
  options.synthetic.test_examples = 16;
  options.synthetic.image_size = 12;
  options.batch_size = 16;
  options.test_batch_size = 16;
  options.iterations = 2;
  options.evaluate = false;
  std::unique_ptr<Trainer> trainer;
  ASSERT_TRUE(Trainer::Create(options, &trainer).ok());
  ASSERT_TRUE(trainer->Run().ok());
  const Status exported = trainer->Export(dir_.string());
  ASSERT_TRUE(exported.ok()) << exported.ToString();
  for (const char* file : {"init_net.pb", "predict_net.pb", "value_info.json"}) {
    EXPECT_TRUE(fs::exists(dir_ / file)) << file;
  }
  fs::create_directories(dir_);
  const fs::path blocked = dir_ / "a_file";
  { std::ofstream(blocked.string()) << "x"; }
  const Status s = trainer->Export((blocked / "model").string());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a_file"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace braid
