// Predictor (include/braid/predictor.h): concurrent Runs against single-threaded ones, bit for bit;
// one copy of the parameters; a plan per input signature and context, cached; inputs of every dtype
// read in place; clear errors for bad inputs and for nets that would race on shared blobs.
#include "braid/predictor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/intra_op_threads.h"
#include "runtime/io/model_folder.h"
#include "testing/net_text.h"
#include "testing/test_ops.h"

namespace braid {
namespace {

using braid::testing::NetFromText;

// GivenTensorFill of `shape` with values from a fixed formula.
std::string Fill(const std::string& name, const std::vector<int64_t>& shape, float scale) {
  int64_t n = 1;
  std::string text =
      "op { type: \"GivenTensorFill\" output: \"" + name + "\" arg { name: \"shape\"";
  for (int64_t d : shape) {
    text += " ints: " + std::to_string(d);
    n *= d;
  }
  text += " } arg { name: \"values\"";
  for (int64_t i = 0; i < n; ++i) text += " floats: " + std::to_string(scale * ((i * 7 % 11) - 5));
  return text + " } }\n";
}

// data [N,3,6,6] -> Conv 3x3 (4 channels) -> Relu in place -> global average pool -> FC (5) ->
// Softmax "prob".
NetDef InitNet() {
  return NetFromText("name: \"init\"\n" + Fill("w", {4, 3, 3, 3}, 0.05f) + Fill("b", {4}, 0.1f) +
                     Fill("fc_w", {5, 4}, 0.2f) + Fill("fc_b", {5}, 0.05f));
}

NetDef PredictNet() {
  return NetFromText(R"(name: "small_cnn"
    op { type: "Conv" input: "data" input: "w" input: "b" output: "conv"
         arg { name: "kernel" i: 3 } arg { name: "pad" i: 1 } }
    op { type: "Relu" input: "conv" output: "conv" }
    op { type: "AveragePool" input: "conv" output: "pool" arg { name: "global_pooling" i: 1 } }
    op { type: "FC" input: "pool" input: "fc_w" input: "fc_b" output: "fc" }
    op { type: "Softmax" input: "fc" output: "prob" }
    external_input: "data" external_input: "w" external_input: "b" external_input: "fc_w"
    external_input: "fc_b" external_output: "prob")");
}

std::vector<float> Image(int batch, int seed) {
  std::vector<float> image(batch * 3 * 6 * 6);
  for (size_t i = 0; i < image.size(); ++i) image[i] = ((i * 13 + seed * 31) % 17) / 8.0f - 1;
  return image;
}

std::unique_ptr<Predictor> Make(const PredictorOptions& options) {
  std::unique_ptr<Predictor> predictor;
  const Status status = Predictor::FromNetDefs(InitNet(), PredictNet(), options, &predictor);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return predictor;
}

std::vector<float> Probabilities(const Predictor& predictor, const std::vector<float>& image,
                                 int batch) {
  std::map<std::string, OutputTensor> outputs;
  const Status status =
      predictor.Run({{"data", InputView::Of(image.data(), {batch, 3, 6, 6})}}, &outputs);
  EXPECT_TRUE(status.ok()) << status.ToString();
  const OutputTensor& prob = outputs.at("prob");
  EXPECT_EQ(prob.shape, (std::vector<int64_t>{batch, 5}));
  return std::vector<float>(prob.data<float>(), prob.data<float>() + prob.numel());
}

TEST(PredictorTest, NamesItsInputsAndOutputsAndComputesTheNet) {
  const auto predictor = Make({});
  ASSERT_NE(predictor, nullptr);
  EXPECT_EQ(predictor->input_names(), (std::vector<std::string>{"data"}));
  EXPECT_EQ(predictor->output_names(), (std::vector<std::string>{"prob"}));
  const std::vector<float> prob = Probabilities(*predictor, Image(2, 0), 2);
  for (int n = 0; n < 2; ++n) {
    float sum = 0;
    for (int c = 0; c < 5; ++c) sum += prob[n * 5 + c];
    EXPECT_NEAR(sum, 1.f, 1e-5);
  }
  EXPECT_NE(prob[0], prob[5]);  // two different images
}

// 8 threads, 40 requests each, through 3 contexts (2 workers each): every output equals the
// single-threaded Run's, bit for bit; the parameters are held once and each context has one arena.
TEST(PredictorTest, ConcurrentRunsMatchSingleThreadedRunsBitForBit) {
  PredictorOptions serial_options;
  const auto serial = Make(serial_options);
  std::vector<std::vector<float>> expected;
  for (int seed = 0; seed < 16; ++seed)
    expected.push_back(Probabilities(*serial, Image(1, seed), 1));

  PredictorOptions options;
  options.max_concurrent_runs = 3;
  options.workers_per_run = 2;
  const auto predictor = Make(options);
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      std::map<std::string, OutputTensor> outputs;  // reused across requests
      for (int r = 0; r < 40; ++r) {
        const int seed = (t * 5 + r) % 16;
        const std::vector<float> image = Image(1, seed);
        if (!predictor->Run({{"data", InputView::Of(image.data(), {1, 3, 6, 6})}}, &outputs).ok()) {
          ++failures;
          continue;
        }
        if (std::memcmp(outputs.at("prob").bytes.data(), expected[seed].data(),
                        expected[seed].size() * sizeof(float)) != 0) {
          ++mismatches;
        }
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);

  const PredictorMemory memory = predictor->memory();
  EXPECT_EQ(memory.parameter_bytes, (4 * 27 + 4 + 5 * 4 + 5) * 4);
  EXPECT_GE(memory.contexts, 1);
  EXPECT_LE(memory.contexts, 3);
  EXPECT_EQ(memory.plans, memory.contexts);  // one input signature
  EXPECT_GT(memory.arena_bytes, 0);
  EXPECT_EQ(memory.arena_bytes, memory.contexts * serial->memory().arena_bytes);
  EXPECT_LE(memory.lower_bound_bytes, memory.arena_bytes);
}

// A new batch size is planned once; the context's plans share its arena (the largest plan).
TEST(PredictorTest, EachBatchSizeIsPlannedOnceIntoTheContextsArena) {
  const auto predictor = Make({});
  const std::vector<float> one = Probabilities(*predictor, Image(1, 3), 1);
  const int64_t arena_of_one = predictor->memory().arena_bytes;
  const std::vector<float> four = Probabilities(*predictor, Image(4, 3), 4);
  EXPECT_EQ(predictor->memory().plans, 2);
  const int64_t arena_of_four = predictor->memory().arena_bytes;
  EXPECT_GT(arena_of_four, arena_of_one);
  EXPECT_EQ(Probabilities(*predictor, Image(1, 3), 1), one);
  EXPECT_EQ(Probabilities(*predictor, Image(4, 3), 4), four);
  EXPECT_EQ(predictor->memory().plans, 2);
  EXPECT_EQ(predictor->memory().arena_bytes, arena_of_four);
  EXPECT_EQ(predictor->memory().contexts, 1);
}

// Bytes the process's cpu allocator holds now.
int64_t CpuBytesInUse() { return CpuAllocator()->stats().bytes_in_use; }

// Batches 16, 32 and 64 in one context: each plan grew the first's arena, and the 32 plan, made
// before the last growth, used to keep the old arena alive beside the new one (and the report
// left it out). Now the context holds what a context that saw only 64 holds, and says so.
TEST(PredictorTest, APlanThatGrowsTheArenaLeavesNoOldArenaBehind) {
  auto resident = [](const std::vector<int>& batches, PredictorMemory* memory) {
    const int64_t before = CpuBytesInUse();
    const auto predictor = Make({});
    const int64_t parameters = CpuBytesInUse() - before;
    for (int batch : batches) Probabilities(*predictor, Image(batch, 1), batch);
    *memory = predictor->memory();
    return CpuBytesInUse() - before - parameters;  // scratch areas come from elsewhere
  };
  PredictorMemory grown, direct;
  const int64_t grown_bytes = resident({16, 32, 64}, &grown);
  const int64_t direct_bytes = resident({64}, &direct);
  EXPECT_EQ(grown.plans, 3);
  EXPECT_EQ(grown.arena_bytes, direct.arena_bytes);
  EXPECT_GT(direct.arena_bytes, 0);
  // The 16 and 32 nets' own blobs (their outputs) are small beside the 64 arena.
  EXPECT_LT(grown_bytes, direct_bytes + direct.arena_bytes / 4)
      << "grown " << grown_bytes << " direct " << direct_bytes << " arena " << direct.arena_bytes;
}

// A context keeps at most max_input_shapes nets: the least recently used (never the first) goes,
// and is built again when its shape comes back.
TEST(PredictorTest, AContextKeepsAtMostMaxInputShapesNets) {
  PredictorOptions options;
  options.max_input_shapes = 2;
  const auto predictor = Make(options);
  const std::vector<float> two = Probabilities(*predictor, Image(2, 4), 2);
  Probabilities(*predictor, Image(1, 4), 1);
  Probabilities(*predictor, Image(3, 4), 3);  // 1 goes (2 is the first)
  EXPECT_EQ(predictor->memory().built_nets, 2);
  Probabilities(*predictor, Image(3, 4), 3);
  Probabilities(*predictor, Image(2, 4), 2);
  EXPECT_EQ(predictor->memory().plans, 3);
  Probabilities(*predictor, Image(1, 4), 1);  // built again; 3 goes
  EXPECT_EQ(predictor->memory().plans, 4);
  EXPECT_EQ(predictor->memory().built_nets, 2);
  EXPECT_EQ(Probabilities(*predictor, Image(2, 4), 2), two);
  options.max_input_shapes = 1;
  std::unique_ptr<Predictor> refused;
  const Status s = Predictor::FromNetDefs(InitNet(), PredictNet(), options, &refused);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("max_input_shapes"), std::string::npos) << s.ToString();
}

// A net whose channels are multiples of 16: the predictor packs its Conv filters
// (runtime/models/pack_parameters.h) and keeps the activations between the Convs blocked, and
// answers what the same nets run plainly in a workspace answer (within the rounding of another Conv
// algorithm: the search's key names the filter's layout, so it may choose another one).
TEST(PredictorTest, PackedFiltersAndBlockedActivationsGiveThePlainNetsAnswers) {
  const NetDef init = NetFromText("name: \"init16\"\n" + Fill("w1", {32, 16, 3, 3}, 0.02f) +
                                  Fill("b1", {32}, 0.1f) + Fill("w2", {32, 32, 3, 3}, 0.01f) +
                                  Fill("b2", {32}, 0.05f));
  const NetDef predict = NetFromText(R"(name: "cnn16"
    op { type: "Conv" input: "data" input: "w1" input: "b1" output: "c1" arg { name: "pad" i: 1 } }
    op { type: "Relu" input: "c1" output: "c1" }
    op { type: "Conv" input: "c1" input: "w2" input: "b2" output: "c2" arg { name: "pad" i: 1 } }
    op { type: "AveragePool" input: "c2" output: "pool" arg { name: "global_pooling" i: 1 } }
    external_input: "data" external_output: "pool")");
  std::vector<float> image(2 * 16 * 10 * 10);
  for (size_t i = 0; i < image.size(); ++i) image[i] = ((i * 13) % 17) / 8.0f - 1;

  Workspace plain;
  ASSERT_TRUE(plain.RunNetOnce(init).ok());
  Tensor* data = plain.CreateBlob("data");
  data->Resize(DType::kFloat32, {2, 16, 10, 10});
  std::memcpy(data->mutable_data<float>(), image.data(), image.size() * sizeof(float));
  ASSERT_TRUE(plain.RunNetOnce(predict).ok());
  const Tensor* expected = plain.GetBlob("pool");

  std::unique_ptr<Predictor> predictor;
  ASSERT_TRUE(Predictor::FromNetDefs(init, predict, {}, &predictor).ok());
  std::map<std::string, OutputTensor> outputs;
  const Status status =
      predictor->Run({{"data", InputView::Of(image.data(), {2, 16, 10, 10})}}, &outputs);
  ASSERT_TRUE(status.ok()) << status.ToString();
  const OutputTensor& pool = outputs.at("pool");
  ASSERT_EQ(pool.shape, (std::vector<int64_t>{2, 32, 1, 1}));
  for (int64_t i = 0; i < pool.numel(); ++i) {
    const float want = expected->data<float>()[i];
    EXPECT_NEAR(pool.data<float>()[i], want, 1e-5f * (1 + std::abs(want))) << i;
  }
}

// Relu in place on the input: the caller's memory is read, never written.
TEST(PredictorTest, ANetThatWritesItsInputGetsACopy) {
  std::unique_ptr<Predictor> predictor;
  ASSERT_TRUE(Predictor::FromNetDefs(NetDef(), NetFromText(R"(name: "inplace"
      op { type: "Relu" input: "x" output: "x" }
      op { type: "Copy" input: "x" output: "y" }
      external_input: "x" external_output: "y")"),
                                     {}, &predictor)
                  .ok());
  const std::vector<float> x = {-1, 2, -3};
  std::map<std::string, OutputTensor> outputs;
  ASSERT_TRUE(predictor->Run({{"x", InputView::Of(x.data(), {3})}}, &outputs).ok());
  EXPECT_EQ(std::vector<float>(outputs["y"].data<float>(), outputs["y"].data<float>() + 3),
            (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(x, (std::vector<float>{-1, 2, -3}));
}

TEST(PredictorTest, InputsOfEveryDtypeAndOutputsOfTheirs) {
  std::unique_ptr<Predictor> predictor;
  ASSERT_TRUE(Predictor::FromNetDefs(NetDef(), NetFromText(R"(name: "types"
      op { type: "Cast" input: "pixels" output: "f" arg { name: "to" i: 1 } }
      op { type: "Copy" input: "ids" output: "ids_out" }
      op { type: "Copy" input: "counts" output: "counts_out" }
      external_input: "pixels" external_input: "ids" external_input: "counts"
      external_output: "f" external_output: "ids_out" external_output: "counts_out")"),
                                     {}, &predictor)
                  .ok());
  const std::vector<uint8_t> pixels = {0, 7, 255};
  const std::vector<int64_t> ids = {int64_t{1} << 40, -2};
  const std::vector<int32_t> counts = {5};
  std::map<std::string, OutputTensor> outputs;
  const Status status = predictor->Run({{"pixels", InputView::Of(pixels.data(), {3})},
                                        {"ids", InputView::Of(ids.data(), {2})},
                                        {"counts", InputView::Of(counts.data(), {1, 1})}},
                                       &outputs);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(outputs["f"].dtype, DType::kFloat32);
  EXPECT_EQ(std::vector<float>(outputs["f"].data<float>(), outputs["f"].data<float>() + 3),
            (std::vector<float>{0, 7, 255}));
  EXPECT_EQ(outputs["ids_out"].dtype, DType::kInt64);
  EXPECT_EQ(outputs["ids_out"].data<int64_t>()[0], int64_t{1} << 40);
  EXPECT_EQ(outputs["counts_out"].shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(outputs["counts_out"].data<int32_t>()[0], 5);
  // Read as another dtype: null, where it used to abort the process.
  EXPECT_EQ(outputs["f"].data<int64_t>(), nullptr);
  EXPECT_EQ(outputs["ids_out"].data<float>(), nullptr);
}

// By position: inputs in input_names() order, outputs in output_names() order, the same answers
// as by name; the caller's output buffers are reused; a wrong count names what the model takes.
TEST(PredictorTest, InputsAndOutputsByPositionAnswerAsByName) {
  std::unique_ptr<Predictor> predictor;
  ASSERT_TRUE(Predictor::FromNetDefs(NetDef(), NetFromText(R"(name: "positions"
      op { type: "Cast" input: "pixels" output: "f" arg { name: "to" i: 1 } }
      op { type: "Copy" input: "ids" output: "ids_out" }
      external_input: "pixels" external_input: "ids"
      external_output: "ids_out" external_output: "f")"),
                                     {}, &predictor)
                  .ok());
  ASSERT_EQ(predictor->input_names(), (std::vector<std::string>{"pixels", "ids"}));
  ASSERT_EQ(predictor->output_names(), (std::vector<std::string>{"ids_out", "f"}));
  const std::vector<uint8_t> pixels = {3, 200};
  const std::vector<int64_t> ids = {-1, 9, int64_t{1} << 35};
  std::vector<OutputTensor> outputs(2);
  outputs[0].bytes.reserve(64);
  const uint8_t* buffer = outputs[0].bytes.data();
  Status status =
      predictor->Run({InputView::Of(pixels.data(), {2}), InputView::Of(ids.data(), {3})}, &outputs);
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].dtype, DType::kInt64);
  EXPECT_EQ(std::vector<int64_t>(outputs[0].data<int64_t>(), outputs[0].data<int64_t>() + 3), ids);
  EXPECT_EQ(outputs[0].bytes.data(), buffer) << "the caller's buffer was not reused";
  EXPECT_EQ(std::vector<float>(outputs[1].data<float>(), outputs[1].data<float>() + 2),
            (std::vector<float>{3, 200}));
  status = predictor->Run({InputView::Of(pixels.data(), {2})}, &outputs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      status.message().find("1 inputs given by position, the model takes 2 ('pixels', 'ids')"),
      std::string::npos)
      << status.message();
}

void ExpectRunRefused(const Predictor& predictor, const std::map<std::string, InputView>& inputs,
                      const std::string& fragment) {
  std::map<std::string, OutputTensor> outputs;
  const Status status = predictor.Run(inputs, &outputs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
}

TEST(PredictorTest, BadInputsAreErrorsNamingThePredictorAndTheInput) {
  const std::string dir = ::testing::TempDir() + "/predictor_zoo";
  ModelFolder model;
  model.init_net = InitNet();
  model.predict_net = PredictNet();
  model.inputs = {{"data", DType::kFloat32, {1, 3, 6, 6}}};
  ASSERT_TRUE(WriteModelFolder(dir, model).ok());
  std::unique_ptr<Predictor> predictor;
  ASSERT_TRUE(Predictor::FromModelFolder(dir, {}, &predictor).ok());
  const std::vector<float> image = Image(1, 0);
  const std::vector<double> wide(image.begin(), image.end());
  ExpectRunRefused(*predictor, {}, "predictor 'small_cnn': input 'data' is missing");
  ExpectRunRefused(*predictor, {{"data", InputView::Of(wide.data(), {1, 3, 6, 6})}},
                   "input 'data' is float64, the model takes float32");
  ExpectRunRefused(*predictor,
                   {{"data", InputView::Of(image.data(), {1, 3, 6, 6})},
                    {"label", InputView::Of(image.data(), {1})}},
                   "'label' is not an input of the model (its inputs: 'data')");
  ExpectRunRefused(*predictor, {{"data", InputView::Of<float>(nullptr, {1, 3, 6, 6})}},
                   "input 'data' has no data");
  ExpectRunRefused(*predictor, {{"data", InputView::Of(image.data(), {1, -3, 6, 6})}},
                   "input 'data': ");
  // A shape the net cannot take fails in the op, naming it; the predictor still serves.
  std::map<std::string, OutputTensor> outputs;
  Status status = predictor->Run({{"data", InputView::Of(image.data(), {1, 2, 6, 6})}}, &outputs);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("Conv"), std::string::npos) << status.message();
  EXPECT_TRUE(predictor->Run({{"data", InputView::Of(image.data(), {1, 3, 6, 6})}}, &outputs).ok());
}

TEST(PredictorTest, APredictNetThatWritesAParameterIsRefused) {
  std::unique_ptr<Predictor> predictor;
  const Status status = Predictor::FromNetDefs(InitNet(), NetFromText(R"(name: "racy"
      op { type: "Relu" input: "data" output: "y" }
      op { type: "Relu" input: "b" output: "b" name: "inplace" }
      external_input: "data" external_output: "y")"),
                                               {}, &predictor);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("predictor 'racy': op 1 (Relu 'inplace') writes 'b', a blob "
                                  "of the init net"),
            std::string::npos)
      << status.message();
  PredictorOptions options;
  options.max_concurrent_runs = 0;
  EXPECT_EQ(Predictor::FromNetDefs(InitNet(), PredictNet(), options, &predictor).code(),
            StatusCode::kInvalidArgument);
  options = {};
  options.device = "tpu:0";
  EXPECT_FALSE(Predictor::FromNetDefs(InitNet(), PredictNet(), options, &predictor).ok());
  EXPECT_EQ(
      Predictor::FromModelFolder(::testing::TempDir() + "/no_such_model", {}, &predictor).code(),
      StatusCode::kNotFound);
}

// On a simulated GPU the inputs are copied to the device and the outputs back; concurrent Runs on
// one device match the serial ones.
TEST(PredictorTest, ServesFromASimulatedGpu) {
  const auto cpu = Make({});
  PredictorOptions options;
  options.device = "sim:0";
  options.max_concurrent_runs = 2;
  const auto sim = Make(options);
  std::vector<std::thread> clients;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      for (int r = 0; r < 10; ++r) {
        const std::vector<float> image = Image(2, t * 10 + r);
        const std::vector<float> got = Probabilities(*sim, image, 2);
        const std::vector<float> want = Probabilities(*cpu, image, 2);
        for (size_t i = 0; i < want.size(); ++i) {
          if (std::abs(got[i] - want[i]) > 1e-6f) ++mismatches;
        }
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_LE(sim->memory().contexts, 2);
}

// Caffe2's zoo init nets often fill the input blob too ("data" as a placeholder): each context
// owns its input all the same. (Sharing the init net's tensor, a Run that fed its input and then
// slept read the input the other Run fed meanwhile.)
TEST(PredictorTest, AnInputTheInitNetAlsoFillsIsEachContextsOwn) {
  ModelFolder model;
  model.init_net = NetFromText("name: \"init\"\n" + Fill("data", {2}, 0.5f));
  model.predict_net = NetFromText(R"(name: "sleepy"
    op { type: "TestSleep" input: "data" arg { name: "us" i: 50000 } }
    op { type: "Copy" input: "data" output: "out" }
    external_input: "data" external_output: "out")");
  model.inputs = {{"data", DType::kFloat32, {2}}};
  const std::string dir = ::testing::TempDir() + "/init_fills_input";
  ASSERT_TRUE(WriteModelFolder(dir, model).ok());
  PredictorOptions options;
  options.max_concurrent_runs = 2;
  std::unique_ptr<Predictor> predictor;
  ASSERT_TRUE(Predictor::FromModelFolder(dir, options, &predictor).ok());
  std::atomic<int> wrong{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 2; ++t) {
    clients.emplace_back([&, t] {
      const std::vector<float> data = {static_cast<float>(t), -1};
      std::map<std::string, OutputTensor> outputs;
      for (int r = 0; r < 3; ++r) {
        const Status s = predictor->Run({{"data", InputView::Of(data.data(), {2})}}, &outputs);
        if (!s.ok() || std::memcmp(outputs["out"].bytes.data(), data.data(), 8) != 0) ++wrong;
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(wrong.load(), 0);
  std::filesystem::remove_all(dir);
}

// An external input no op touches (the zoo's ResNet-50 lists its input queue) is not an input the
// Predictor asks for.
TEST(PredictorTest, AnExternalInputNoOpTouchesIsNotAnInput) {
  NetDef predict = PredictNet();
  predict.add_external_input("gpu_0/imagenet1k_blobs_queue");
  std::unique_ptr<Predictor> predictor;
  ASSERT_TRUE(Predictor::FromNetDefs(InitNet(), predict, {}, &predictor).ok());
  EXPECT_EQ(predictor->input_names(), std::vector<std::string>{"data"});
  EXPECT_EQ(Probabilities(*predictor, Image(1, 3), 1), Probabilities(*Make({}), Image(1, 3), 1));
}

// Each op of a Run runs the OpenMP team intra_op_threads asks for, or the process's by default.
TEST(PredictorTest, OpsRunTheTeamsIntraOpThreadsAsksFor) {
  const NetDef sleepy = NetFromText(R"(name: "sleepy"
    op { type: "TestSleep" input: "data" arg { name: "us" i: 10 } }
    op { type: "Copy" input: "data" output: "out" }
    external_input: "data" external_output: "out")");
  for (const int threads : {0, 1, 3}) {
    PredictorOptions options;
    options.intra_op_threads = threads;
    std::unique_ptr<Predictor> predictor;
    const Status made =
        Predictor::FromNetDefs(NetFromText("name: \"init\""), sleepy, options, &predictor);
    ASSERT_TRUE(made.ok()) << made.ToString();
    braid::testing::TestSleepStats().Reset();
    const std::vector<float> data = {1.5f, -2};
    std::map<std::string, OutputTensor> outputs;
    const Status ran = predictor->Run({{"data", InputView::Of(data.data(), {2})}}, &outputs);
    ASSERT_TRUE(ran.ok()) << ran.ToString();
    EXPECT_EQ(std::memcmp(outputs["out"].bytes.data(), data.data(), sizeof(float) * 2), 0);
    EXPECT_EQ(braid::testing::TestSleepStats().max_threads.load(),
              threads > 0 ? threads : ProcessIntraOpThreads());
  }
}

TEST(PredictorTest, ThreadOptionsOutOfRangeAreRefused) {
  struct Case {
    int runs, workers, threads;
    const char* named;
  };
  for (const Case& c : {Case{0, 1, 0, "max_concurrent_runs"}, Case{1, 1025, 0, "workers_per_run"},
                        Case{1, 1, -1, "intra_op_threads"}, Case{1, 1, 1025, "intra_op_threads"}}) {
    PredictorOptions options;
    options.max_concurrent_runs = c.runs;
    options.workers_per_run = c.workers;
    options.intra_op_threads = c.threads;
    std::unique_ptr<Predictor> predictor;
    const Status s = Predictor::FromNetDefs(InitNet(), PredictNet(), options, &predictor);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.named;
    EXPECT_NE(s.message().find(c.named), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace braid
