// Device tensors on a GPU (include/braid/tensor_view.h), as tests/runtime/device_tensors_test.cc
// proves them on sim: a Predictor on cuda:0 reads its input from the application's cudaMalloc'ed
// buffer once the application's own stream has written it, and writes its outputs into the
// application's buffers; a Session feeds from and fetches into GPU memory. Answers match the model
// run on the host from host memory. Skipped, with the reason, where there is no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "braid/predictor.h"
#include "braid/session.h"
#include "ops/cuda_test_util.h"
#include "testing/net_text.h"

#ifdef BRAID_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace braid::test {
namespace {

using braid::testing::NetFromText;

// data [N,4] * w [4] (broadcast) -> Relu "relu" and Sigmoid "sig".
std::unique_ptr<Predictor> Make(const std::string& device) {
  const NetDef init = NetFromText(R"(name: "init"
    op { type: "GivenTensorFill" output: "w" arg { name: "shape" ints: 4 }
         arg { name: "values" floats: 0.5 floats: -2 floats: 1.25 floats: 3 } })");
  const NetDef predict = NetFromText(R"(name: "scaled"
    op { type: "Mul" input: "data" input: "w" output: "m" arg { name: "broadcast" i: 1 } }
    op { type: "Relu" input: "m" output: "relu" }
    op { type: "Sigmoid" input: "m" output: "sig" }
    external_input: "data" external_input: "w" external_output: "relu" external_output: "sig")");
  PredictorOptions options;
  options.device = device;
  std::unique_ptr<Predictor> predictor;
  const Status status = Predictor::FromNetDefs(init, predict, options, &predictor);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return predictor;
}

std::vector<float> Values(int64_t n) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>((i * 7) % 13 - 6) / 4;
  return values;
}

void ExpectClose(const std::vector<float>& got, const float* want, int64_t n) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), n);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    bad += std::abs(got[i] - want[i]) > 1e-6f * (1 + std::abs(want[i]));
  EXPECT_EQ(bad, 0);
}

#ifdef BRAID_WITH_CUDA
void Check(cudaError_t err) { ASSERT_EQ(err, cudaSuccess) << cudaGetErrorString(err); }

float* GpuFloats(size_t bytes) {
  void* p = nullptr;
  Check(cudaMalloc(&p, bytes));
  return static_cast<float*>(p);
}

// Sleeps on the application's stream: whatever it queues next waits for this.
void CUDART_CB Nap(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }
#endif

// 1M rows of 4: after a warm Run on zeros, the application's stream naps 100 ms, then copies the
// input from pinned memory into its GPU buffer; the Run is called at once and must read the copy.
TEST(CudaDeviceTensors, APredictorOnTheGpuReadsAndWritesTheApplicationsBuffers) {
  BRAID_REQUIRE_GPU();
#ifdef BRAID_WITH_CUDA
  const int64_t rows = 1 << 20;
  const int64_t n = rows * 4;
  const size_t bytes = n * sizeof(float);
  const std::vector<float> values = Values(n);
  std::map<std::string, OutputTensor> want;
  const Status host_run =
      Make("cpu:0")->Run({{"data", InputView::Of(values.data(), {rows, 4})}}, &want);
  ASSERT_TRUE(host_run.ok()) << host_run.ToString();

  const auto gpu = Make("cuda:0");
  cudaStream_t app = nullptr;
  Check(cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
  void* pinned_bytes = nullptr;
  Check(cudaMallocHost(&pinned_bytes, bytes));
  float* const pinned = static_cast<float*>(pinned_bytes);
  std::copy(values.begin(), values.end(), pinned);
  float* const input = GpuFloats(bytes);
  float* const relu = GpuFloats(bytes);
  float* const sig = GpuFloats(bytes);
  Check(cudaMemset(input, 0, bytes));
  Check(cudaDeviceSynchronize());
  const InputView view =
      InputView::OnDevice(static_cast<const float*>(input), {rows, 4}, "cuda:0", app);
  std::map<std::string, OutputView> outputs{{"relu", OutputView::Into(relu, n, "cuda:0")},
                                            {"sig", OutputView::Into(sig, n, "cuda:0")}};
  // Warm: the signature planned and its memory allocated (an allocation may synchronise the GPU,
  // which would hide a missing wait), on zeros.
  ASSERT_TRUE(gpu->Run({{"data", view}}, &outputs).ok());
  Check(cudaLaunchHostFunc(app, Nap, nullptr));
  Check(cudaMemcpyAsync(input, pinned, bytes, cudaMemcpyHostToDevice, app));
  const Status s = gpu->Run({{"data", view}}, &outputs);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<float> got_relu(n), got_sig(n);
  Check(cudaMemcpy(got_relu.data(), relu, bytes, cudaMemcpyDeviceToHost));
  Check(cudaMemcpy(got_sig.data(), sig, bytes, cudaMemcpyDeviceToHost));
  ExpectClose(got_relu, want["relu"].data<float>(), n);
  ExpectClose(got_sig, want["sig"].data<float>(), n);
  EXPECT_EQ(outputs["sig"].shape, (std::vector<int64_t>{rows, 4}));

  // The same GPU memory served by a model on the host (copied through it).
  std::map<std::string, OutputTensor> from_host_model;
  const Status on_host = Make("cpu:0")->Run(
      {{"data", InputView::OnDevice(static_cast<const float*>(input), {rows, 4}, "cuda:0")}},
      &from_host_model);
  EXPECT_TRUE(on_host.ok()) << on_host.ToString();
  EXPECT_EQ(from_host_model["relu"].bytes, want["relu"].bytes);

  Check(cudaStreamSynchronize(app));
  Check(cudaFree(input));
  Check(cudaFree(relu));
  Check(cudaFree(sig));
  Check(cudaFreeHost(pinned));
  Check(cudaStreamDestroy(app));
#endif
}

// A Session on cuda:0 feeds a blob from GPU memory (a copy on the device) and fetches it into
// other GPU memory and into the host's.
TEST(CudaDeviceTensors, ASessionFeedsFromAndFetchesIntoGpuMemory) {
  BRAID_REQUIRE_GPU();
#ifdef BRAID_WITH_CUDA
  const std::vector<float> values = Values(24);
  const size_t bytes = values.size() * sizeof(float);
  float* const source = GpuFloats(bytes);
  float* const target = GpuFloats(bytes);
  Check(cudaMemcpy(source, values.data(), bytes, cudaMemcpyHostToDevice));
  Session session;
  ASSERT_TRUE(session.SetDevice("cuda:0").ok());
  Status s = session.Feed(
      "x", InputView::OnDevice(static_cast<const float*>(source), {4, 6}, "cuda:0", nullptr));
  ASSERT_TRUE(s.ok()) << s.ToString();
  Check(cudaMemset(source, 0, bytes));  // the blob is a copy
  OutputView into_gpu = OutputView::Into(target, 24, "cuda:0");
  s = session.Fetch("x", &into_gpu);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<float> got(values.size());
  Check(cudaMemcpy(got.data(), target, bytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, values);
  std::vector<float> on_host(values.size());
  OutputView into_host = OutputView::Into(on_host.data(), 24);
  s = session.Fetch("x", &into_host);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(on_host, values);
  Check(cudaFree(source));
  Check(cudaFree(target));
#endif
}

}  // namespace
}  // namespace braid::test
