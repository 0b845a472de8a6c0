// CUDA kernels of ops/train against their CPU kernels (tests/ops/cuda_test_util.h): every
// LearningRate policy at several iterations, MomentumSGDUpdate with and without nesterov, Adam and
// Adagrad, WeightedSum with more pairs than one launch takes, the Iter counter on the device, and
// the NCCL Allreduce across the processes of a (one-process) group.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "ops/cuda_test_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/workspace.h"
#include "runtime/dist/process_group.h"

namespace braid::test {
namespace {

HostBlob Int64Scalar(const std::string& name, int64_t value) {
  Tensor t(DType::kInt64, {1});
  t.mutable_data<int64_t>()[0] = value;
  return {name, t};
}

TEST(CudaTrain, LearningRateMatchesCpuForEveryPolicy) {
  BRAID_REQUIRE_GPU();
  const std::vector<std::string> policies = {
      R"(arg { name: "policy" s: "fixed" })",
      R"(arg { name: "policy" s: "step" } arg { name: "stepsize" i: 30 }
         arg { name: "gamma" f: 0.5 })",
      R"(arg { name: "policy" s: "multistep" } arg { name: "stepsizes" ints: [9, 150, 4000] }
         arg { name: "gamma" f: 0.3 })",
      R"(arg { name: "policy" s: "exp" } arg { name: "gamma" f: 0.999 })",
      R"(arg { name: "policy" s: "inv" } arg { name: "gamma" f: 0.01 } arg { name: "power" f: 0.75 })",
      R"(arg { name: "policy" s: "poly" } arg { name: "max_iter" i: 4000 } arg { name: "power" f: 2 })",
      R"(arg { name: "policy" s: "linearWarmup" } arg { name: "start_multiplier" f: 0.1 }
         arg { name: "num_iter" i: 100 })",
      R"(arg { name: "policy" s: "constantWarmup" } arg { name: "multiplier" f: 0.2 }
         arg { name: "num_iter" i: 50 })",
      R"(arg { name: "policy" s: "cosine" } arg { name: "max_iter" i: 1000 }
         arg { name: "min_lr" f: 0.01 })",
      R"(arg { name: "policy" s: "cosine" } arg { name: "period" i: 100 }
         arg { name: "t_mult" f: 2 } arg { name: "lr_shrink" f: 0.9 })",
      R"(arg { name: "policy" s: "cosine" } arg { name: "period" i: 100 }
         arg { name: "t_mult" f: 3 } arg { name: "min_lr" f: 0.1 })",
      R"(arg { name: "policy" s: "cosine" } arg { name: "period" i: 4 }
         arg { name: "t_mult" f: 1.5 })",
      R"(arg { name: "policy" s: "compositeCosine" } arg { name: "constant_warmup_num_iter" i: 10 }
         arg { name: "linear_warmup_num_iter" i: 40 } arg { name: "cosine_period" i: 200 }
         arg { name: "cosine_max_lr" f: 1 } arg { name: "cosine_min_lr" f: 0.05 })",
  };
  for (const std::string& policy : policies) {
    // 4000, 12099, 12100: t_mult 3's restarts of cycles 4 and 5 (see train_ops_test.cc).
    for (int64_t iter : {0, 1, 9, 29, 30, 75, 150, 999, 1000, 4000, 12099, 12100, 123456}) {
      SCOPED_TRACE(policy + " at iteration " + std::to_string(iter));
      ExpectCudaMatchesCpu(R"(type: "LearningRate" input: "iter" output: "lr"
                              arg { name: "base_lr" f: -0.1 } arg { name: "lr_scale" f: 0.5 } )" +
                               policy,
                           {Int64Scalar("iter", iter)}, Tolerance{1e-9, 1e-6});
    }
  }
}

TEST(CudaTrain, AdamMatchesCpuCoupledAndDecoupledWithItsStepOutput) {
  BRAID_REQUIRE_GPU();
  for (const char* decoupled : {"0", "1"}) {
    SCOPED_TRACE(std::string("decoupled ") + decoupled);
    ExpectCudaMatchesCpu(
        std::string(R"(type: "Adam" input: "w" input: "m1" input: "m2"
        input: "g" input: "lr" input: "iter" output: "w" output: "m1" output: "m2" output: "step"
        arg { name: "epsilon" f: 1e-8 } arg { name: "weight_decay" f: 0.01 }
        arg { name: "decoupled" i: )") +
            decoupled + "}",
        {RandomFloats("w", {1000, 3}, 1), RandomFloats("m1", {1000, 3}, 2),
         Floats("m2", {1000, 3}, std::vector<float>(3000, 0.25f)), RandomFloats("g", {1000, 3}, 3),
         Floats("lr", {1}, {-0.01f}), Int64Scalar("iter", 41)},
        Tolerance{1e-6, 1e-5});
  }
}

TEST(CudaTrain, AdagradMatchesCpuWithItsOptionalOutputs) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "Adagrad" input: "w" input: "h" input: "g" input: "lr"
      output: "w" output: "h" output: "effective_lr" output: "update"
      arg { name: "decay" f: 0.95 } arg { name: "weight_decay" f: 0.001 })",
                       {RandomFloats("w", {777}, 4), Floats("h", {777}, std::vector<float>(777, 1)),
                        RandomFloats("g", {777}, 5), Floats("lr", {}, {-0.05f})},
                       Tolerance{1e-6, 1e-5});
}

TEST(CudaTrain, MomentumSGDUpdateMatchesCpuWithAndWithoutNesterov) {
  BRAID_REQUIRE_GPU();
  for (const char* nesterov : {"0", "1"}) {
    SCOPED_TRACE(std::string("nesterov ") + nesterov);
    ExpectCudaMatchesCpu(std::string(R"(type: "MomentumSGDUpdate" input: "g" input: "m"
        input: "lr" input: "w" output: "g" output: "m" output: "w"
        arg { name: "momentum" f: 0.9 } arg { name: "weight_decay" f: 0.0001 }
        arg { name: "nesterov" i: )") + nesterov + "}",
                         {RandomFloats("g", {1000, 3}, 1), RandomFloats("m", {1000, 3}, 2),
                          Floats("lr", {1}, {0.05f}), RandomFloats("w", {1000, 3}, 3)},
                         Tolerance{1e-6, 1e-5});
  }
  // Outputs apart from the inputs, no momentum, no decay.
  ExpectCudaMatchesCpu(R"(type: "MomentumSGDUpdate" input: "g" input: "m" input: "lr" input: "w"
                          output: "g2" output: "m2" output: "w2")",
                       {RandomFloats("g", {17}, 4), RandomFloats("m", {17}, 5),
                        Floats("lr", {}, {0.5f}), RandomFloats("w", {17}, 6)},
                       Tolerance{1e-6, 1e-5});
}

TEST(CudaTrain, WeightedSumMatchesCpuInPlaceAndWithManyPairs) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "WeightedSum" input: "w" input: "one" input: "g" input: "lr"
                          output: "w")",
                       {RandomFloats("w", {33, 5}, 7), Floats("one", {1}, {1.f}),
                        RandomFloats("g", {33, 5}, 8), Floats("lr", {1}, {-0.1f})},
                       Tolerance{1e-6, 1e-5});
  std::string op = R"(type: "WeightedSum" output: "Y")";
  std::vector<HostBlob> inputs;
  for (int k = 0; k < 11; ++k) {  // more than one launch's 8 pairs
    const std::string x = "X" + std::to_string(k), w = "w" + std::to_string(k);
    op += " input: \"" + x + "\" input: \"" + w + "\"";
    inputs.push_back(RandomFloats(x, {129}, 10 + k));
    inputs.push_back(RandomFloats(w, {1}, 30 + k));
  }
  ExpectCudaMatchesCpu(op, inputs, Tolerance{1e-5, 1e-5});
}

TEST(CudaTrain, WeightedSumGradientMatchesCpu) {
  BRAID_REQUIRE_GPU();
  const std::vector<HostBlob> inputs{RandomFloats("dY", {1000, 7}, 40), RandomFloats("X0", {1000, 7}, 41),
                                     Floats("w0", {1}, {0.5f}), RandomFloats("X1", {1000, 7}, 42),
                                     Floats("w1", {1}, {-2.f})};
  ExpectCudaMatchesCpu(R"(type: "WeightedSumGradient" input: "dY" input: "X0" input: "w0"
                          input: "X1" input: "w1" output: "dX0" output: "dX1")",
                       inputs, Tolerance{0, 0});
  ExpectCudaMatchesCpu(R"(type: "WeightedSumGradient" input: "dY" input: "X0" input: "w0"
                          input: "X1" input: "w1" output: "dX0" output: "dX1" output: "dw0"
                          output: "dw1" arg { name: "grad_on_w" i: 1 })",
                       inputs, Tolerance{1e-6, 1e-6});
}

TEST(CudaTrain, IterIncrementsTheCounterOnTheDevice) {
  BRAID_REQUIRE_GPU();
  ExpectCudaMatchesCpu(R"(type: "Iter" input: "iter" output: "iter")", {Int64Scalar("iter", 41)},
                       Tolerance{0, 0});
  const std::vector<Tensor> out = RunOnDevice(R"(type: "Iter" output: "old_style")", {}, "cuda:0");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<int64_t>()[0], 1);
}

TEST(CudaTrain, IterStaysAtTheMaximumInsteadOfThrowing) {
  BRAID_REQUIRE_GPU();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<Tensor> out = RunOnDevice(R"(type: "Iter" input: "iter" output: "iter")",
                                              {Int64Scalar("iter", kMax)}, "cuda:0");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<int64_t>()[0], kMax);
}

// A group of one process with one GPU: the clique's world is 1, so the sum and the mean of each of
// the bucket's two tensors are the tensor itself; the unique id still goes through the group's
// store.
TEST(CudaTrain, AllreduceAcrossProcessesOfAOneProcessGroupKeepsTheBlob) {
  BRAID_REQUIRE_GPU();
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("braid_nccl_processes_" + std::to_string(getpid())))
                              .string();
  ProcessGroupOptions options;
  options.rendezvous = "file://" + dir;
  std::unique_ptr<ProcessGroup> group;
  ASSERT_TRUE(ProcessGroup::Connect(options, &group).ok());
  SetProcessGroup(std::move(group));
  const HostBlob g = RandomFloats("g", {3, 5}, /*seed=*/7);
  const HostBlob h = RandomFloats("h", {4}, /*seed=*/8);
  for (const char* average : {"0", "1"}) {
    const std::vector<Tensor> out = RunOnDevice(
        std::string(R"(type: "ProcessAllreduce" input: "g" input: "h" output: "g" output: "h" )") +
            R"(arg { name: "tensors" i: 2 } arg { name: "average" i: )" + average + " }",
        {g, h}, "cuda:0");
    ASSERT_EQ(out.size(), 2u);
    for (int t = 0; t < 2; ++t) {
      const Tensor& want = (t == 0 ? g : h).value;
      ASSERT_EQ(out[t].shape(), want.shape());
      for (int64_t i = 0; i < want.numel(); ++i) {
        EXPECT_EQ(out[t].data<float>()[i], want.data<float>()[i]) << "average " << average;
      }
    }
  }
  SetProcessGroup(nullptr);
  std::filesystem::remove_all(dir);
}

TEST(CudaTrain, AllreduceAcrossProcessesWithoutAGroupNamesTheOp) {
  BRAID_REQUIRE_GPU();
  SetProcessGroup(nullptr);
  Workspace ws;
  Feed<float>(&ws, "h", {4}, {1, 2, 3, 4});
  const Status s = ws.RunNetOnce(NetOf(
      {R"(type: "CopyCPUToGPU" input: "h" output: "g" device_option { device_type: 1 })",
       R"(type: "ProcessAllreduce" name: "ar" input: "g" output: "g" )"
       R"(device_option { device_type: 1 device_id: 0 })"}));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("ProcessAllreduce 'ar' needs a process group"), std::string::npos)
      << s.ToString();
}

// The old way across processes (Allreduce with processes: 1) is refused, naming the op to use.
TEST(CudaTrain, AllreduceWithProcessesIsRefusedNamingProcessAllreduce) {
  BRAID_REQUIRE_GPU();
  Workspace ws;
  Feed<float>(&ws, "h", {4}, {1, 2, 3, 4});
  const Status s = ws.RunNetOnce(NetOf(
      {R"(type: "CopyCPUToGPU" input: "h" output: "g" device_option { device_type: 1 })",
       R"(type: "Allreduce" engine: "NCCL" input: "g" output: "g" )"
       R"(arg { name: "processes" i: 1 } device_option { device_type: 1 })"}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("across processes, ProcessAllreduce"), std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace braid::test
