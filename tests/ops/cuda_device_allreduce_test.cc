// braid's device-side all-reduce (ops/collective/device_allreduce.h) against the cpu Allreduce: the
// same pairwise order (ops/collective/pairwise_sum.h), so the same bits, with the ranks on streams
// of their own and with every rank on one stream (kernels serialised, as under
// CUDA_LAUNCH_BLOCKING=1: no kernel may wait for another); each rank's stream waits for every
// peer's input and every peer's slice; and the Allreduce op over two logical GPUs of one GPU
// (BRAID_CUDA_DEVICES=0,0) takes that engine. Skipped, with the reason, where there is no GPU (or,
// for the op, no two logical GPUs on one).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ops/collective/pairwise_sum.h"
#include "ops/cuda_test_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/device_context.h"
#include "runtime/exec/net.h"
#ifdef BRAID_WITH_CUDA
#include "ops/collective/device_allreduce.h"
#include "runtime/device/cuda/cuda_device.h"
#endif

namespace braid::test {
namespace {

const Device kGpu0{DeviceType::kCuda, 0};

std::vector<std::vector<float>> RandomInputs(int ranks, int64_t numel, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1e3f, 1e3f);
  std::vector<std::vector<float>> inputs(ranks, std::vector<float>(numel));
  for (auto& input : inputs) {
    for (float& v : input) v = value(rng);
  }
  return inputs;
}

// What the cpu Allreduce (ops/collective/allreduce_op.cc) makes of `inputs`: every output.
std::vector<float> CpuAllreduce(const std::vector<std::vector<float>>& inputs, bool average) {
  Workspace ws;
  std::string op = R"(type: "Allreduce")";
  for (size_t r = 0; r < inputs.size(); ++r) {
    const std::string blob = "x" + std::to_string(r);
    Feed<float>(&ws, blob, {static_cast<int64_t>(inputs[r].size())}, inputs[r]);
    op += " input: \"" + blob + "\" output: \"" + blob + "\"";
  }
  if (average) op += R"( arg { name: "average" i: 1 })";
  EXPECT_TRUE(RunOp(&ws, op));
  return Fetch<float>(ws, "x0");
}

// PairwiseSum's definition, element by element, on the host.
std::vector<float> PairwiseReference(const std::vector<std::vector<float>>& inputs, bool average) {
  const int n = static_cast<int>(inputs.size());
  const float scale = average ? 1.f / static_cast<float>(n) : 1.f;
  std::vector<float> out(inputs[0].size());
  for (size_t k = 0; k < out.size(); ++k) {
    out[k] = PairwiseSum(n, [&](int r) { return inputs[r][k]; }) * scale;
  }
  return out;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

#ifdef BRAID_WITH_CUDA
cudaStream_t CudaStreamOf(Stream* stream) {
  cudaStream_t s = nullptr;
  stream->RunHere([&] { s = CurrentCudaStream(); });
  return s;
}

// n buffers on cuda:0, one per rank, filled with `inputs`.
struct GpuBuffers {
  GpuBuffers(DeviceContext* gpu, const std::vector<std::vector<float>>& inputs)
      : gpu(gpu), bytes(inputs[0].size() * sizeof(float)) {
    for (const auto& input : inputs) {
      ptrs.push_back(static_cast<float*>(gpu->allocator()->Allocate(bytes)));
      gpu->CopyFromHost(ptrs.back(), input.data(), bytes);
    }
  }
  ~GpuBuffers() {
    gpu->Synchronize();
    for (float* p : ptrs) gpu->allocator()->Free(p, bytes);
  }
  std::vector<float> Host(int r) const {
    std::vector<float> out(bytes / sizeof(float));
    gpu->CopyToHost(out.data(), ptrs[r], bytes);
    return out;
  }
  DeviceContext* const gpu;
  const size_t bytes;
  std::vector<float*> ptrs;
};

// Launches `reduce` over `ranks` buffers of random inputs on `streams` (rank r on streams[r]),
// with and without averaging (the second launch reuses the events), and expects every rank's
// buffer to hold the cpu Allreduce's bits.
void ExpectCpuBits(DeviceAllreduce& reduce, int ranks, const std::vector<cudaStream_t>& streams) {
  DeviceContext* gpu = GetDeviceContext(kGpu0);
  constexpr int64_t kNumel = 100003;  // splits unevenly
  for (bool average : {false, true}) {
    const uint32_t seed = static_cast<uint32_t>(10 * ranks + average);
    SCOPED_TRACE(std::to_string(ranks) + " ranks, average " + std::to_string(average) +
                 ", seed " + std::to_string(seed));
    const std::vector<std::vector<float>> inputs = RandomInputs(ranks, kNumel, seed);
    GpuBuffers buffers(gpu, inputs);
    ASSERT_NO_THROW(reduce.Launch(buffers.ptrs, kNumel,
                                  average ? 1.f / static_cast<float>(ranks) : 1.f, streams));
    gpu->Synchronize();
    const std::vector<float> cpu = CpuAllreduce(inputs, average);
    EXPECT_TRUE(SameBits(cpu, PairwiseReference(inputs, average)))
        << "the cpu Allreduce does not add in PairwiseSum's order";
    for (int r = 0; r < ranks; ++r) {
      EXPECT_TRUE(SameBits(buffers.Host(r), cpu)) << "rank " << r;
    }
  }
}

#endif

// Ranks on streams of cuda:0 of their own (one physical GPU, as logical GPUs are), every rank
// count from 1 to 8.
TEST(CudaDeviceAllreduce, SliceKernelsSumToTheBitsOfTheCpuAllreduce) {
  BRAID_REQUIRE_GPU();
#ifdef BRAID_WITH_CUDA
  DeviceContext* gpu = GetDeviceContext(kGpu0);
  for (int ranks = 1; ranks <= 8; ++ranks) {
    DeviceAllreduce reduce("test all-reduce", std::vector<Device>(ranks, kGpu0));
    ASSERT_NO_THROW(reduce.Prepare());
    std::vector<cudaStream_t> streams;
    for (int r = 0; r < ranks; ++r) streams.push_back(CudaStreamOf(gpu->stream(r)));
    ExpectCpuBits(reduce, ranks, streams);
  }
#endif
}

// Every rank on one stream: its kernels run one after another, as every kernel does under
// CUDA_LAUNCH_BLOCKING=1, compute-sanitizer or Nsight Compute. A rank kernel that waited for its
// peers would wait for one queued behind it, forever; event waits on the stream's own earlier
// records are met at once.
TEST(CudaDeviceAllreduce, EveryRankOnOneStreamSumsToTheSameBits) {
  BRAID_REQUIRE_GPU();
#ifdef BRAID_WITH_CUDA
  const cudaStream_t one_stream = CudaStreamOf(GetDeviceContext(kGpu0)->stream(0));
  for (int ranks = 2; ranks <= 8; ranks += 3) {
    DeviceAllreduce reduce("test all-reduce", std::vector<Device>(ranks, kGpu0));
    ASSERT_NO_THROW(reduce.Prepare());
    ExpectCpuBits(reduce, ranks, std::vector<cudaStream_t>(ranks, one_stream));
  }
#endif
}

// Rank 1's input is a 64 MiB copy from the host queued on its stream just before the launch (read
// from the host in stream order, then copied: milliseconds); rank 0's stream alone is then read
// back and synchronised. Its buffer holds the full sum only if rank 0's slice waited for rank 1's
// input (else it adds the zeros rank 1's buffer held) and rank 0's stream waited for rank 1's
// slice (else the second half is still rank 0's input).
TEST(CudaDeviceAllreduce, EachStreamWaitsForEveryPeersInputAndEveryPeersSlice) {
  BRAID_REQUIRE_GPU();
#ifdef BRAID_WITH_CUDA
  DeviceContext* gpu = GetDeviceContext(kGpu0);
  const Device host{DeviceType::kCpu, 0};
  constexpr int64_t kNumel = int64_t{16} << 20;
  const size_t bytes = kNumel * sizeof(float);
  const std::vector<std::vector<float>> inputs = RandomInputs(2, kNumel, 5);
  GpuBuffers buffers(gpu, {inputs[0], std::vector<float>(kNumel, 0.f)});
  Stream* const streams[2] = {gpu->stream(0), gpu->stream(1)};
  DeviceAllreduce reduce("test all-reduce", {kGpu0, kGpu0});
  ASSERT_NO_THROW(reduce.Prepare());
  streams[1]->RunHere([&] {  // rank 1's input arrives late
    gpu->CopyInKernel(buffers.ptrs[1], kGpu0, inputs[1].data(), host, bytes);
  });
  ASSERT_NO_THROW(reduce.Launch(buffers.ptrs, kNumel, 1.f,
                                {CudaStreamOf(streams[0]), CudaStreamOf(streams[1])}));
  std::vector<float> result(kNumel, -1.f);
  streams[0]->RunHere([&] {  // what rank 0's stream sees after the all-reduce
    gpu->CopyInKernel(result.data(), host, buffers.ptrs[0], kGpu0, bytes);
  });
  streams[0]->Synchronize();
  EXPECT_TRUE(SameBits(result, CpuAllreduce(inputs, /*average=*/false)));
#endif
}

// Why cuda:0 and cuda:1 are not two logical GPUs of one GPU ("" when they are).
std::string NotTwoLogicalGpus() {
  Status s = StatusFromCall([] { GetDeviceContext(Device{DeviceType::kCuda, 1}); });
  if (!s.ok()) return s.message();
  if (!SharePhysicalDevice(kGpu0, Device{DeviceType::kCuda, 1})) {
    return "cuda:0 and cuda:1 are distinct GPUs (run with BRAID_CUDA_DEVICES=0,0)";
  }
  return "";
}

// The Allreduce op over cuda:0 and cuda:1 of one GPU: NCCL would refuse them, braid's device-side
// all-reduce gives the cpu pass's bits, run after run.
TEST(CudaDeviceAllreduce, TheAllreduceOpOverTwoLogicalGpusOfOneGpuGivesTheCpuBits) {
  BRAID_REQUIRE_GPU();
  if (const std::string why = NotTwoLogicalGpus(); !why.empty()) GTEST_SKIP() << why;
  const Device gpus[2] = {kGpu0, Device{DeviceType::kCuda, 1}};
  Workspace ws;
  NetDef net = NetOf({R"(type: "Allreduce" input: "g0" input: "g1" output: "g0" output: "g1"
                         arg { name: "average" i: 1 })"},
                     "dag");
  *net.mutable_op(0)->mutable_device_option() = DeviceToProto(gpus[0]);
  for (int r = 0; r < 2; ++r) *ws.CreateBlob("g" + std::to_string(r)) = Tensor(gpus[r]);
  Net* n = nullptr;
  for (int run = 0; run < 3; ++run) {
    const std::vector<std::vector<float>> inputs = RandomInputs(2, 4099, 20 + run);
    for (int r = 0; r < 2; ++r) {
      Tensor host(DType::kFloat32, {4099});
      std::memcpy(host.mutable_data<float>(), inputs[r].data(), 4099 * sizeof(float));
      ws.GetBlob("g" + std::to_string(r))->CopyFrom(host);
    }
    if (n == nullptr) n = ws.CreateNet(net);
    const Status s = n->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
    const std::vector<float> cpu = CpuAllreduce(inputs, /*average=*/true);
    for (int r = 0; r < 2; ++r) {
      Tensor host;
      host.CopyFrom(*ws.GetBlob("g" + std::to_string(r)));
      EXPECT_TRUE(SameBits(std::vector<float>(host.data<float>(), host.data<float>() + 4099), cpu))
          << "run " << run << ", rank " << r;
    }
  }
}

}  // namespace
}  // namespace braid::test
