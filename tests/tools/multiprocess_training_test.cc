// Multi-process data parallelism end to end: braid_launch starts braid_train ranks that meet in a
// file store and all-reduce over Gloo on loopback. Two processes with one cpu device each must
// train ResNet-20 to the parameters of one process with two cpu devices (the same global batch,
// split the same way, averaged the same way) bit for bit, and the job's evaluation is every
// rank's. Two processes with two simulated GPUs each (hierarchical: devices, then processes
// through host copies) train like one process with four, bit for bit too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "proto/braid.pb.h"
#include "runtime/io/proto_io.h"
#include "testing/test_paths.h"

namespace braid {
namespace {

namespace fs = std::filesystem;
using braid::testing::BraidBinary;

// Runs `command` in a shell; returns its exit status, its output in *output.
int Shell(const std::string& command, std::string* output) {
  const fs::path log = fs::temp_directory_path() / ("braid_mp_" + std::to_string(getpid()));
  const int status = std::system((command + " >" + log.string() + " 2>&1").c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  *output = text.str();
  fs::remove(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::map<std::string, TensorProto> Checkpoint(const fs::path& path) {
  TensorProtos protos;
  LoadProto(path.string(), &protos);
  std::map<std::string, TensorProto> by_name;
  for (const TensorProto& t : protos.protos()) by_name[t.name()] = t;
  return by_name;
}

// Each process times its own algorithm choices (runtime/device/algorithm_registry.h), and timings
// differ between processes: the rule mode makes every process choose alike, so the bits can agree.
constexpr char kSameAlgorithms[] = "BRAID_ALGORITHM_SEARCH=rule ";

std::string TrainFlags(const fs::path& checkpoint) {
  return " --model resnet20 --data synthetic --synthetic_examples 128 --image_size 12"
         " --batch_size 16 --test_batch_size 16 --iters 8 --lr_policy fixed --executor dag"
         " --threads 2 --intra_op_threads 1 --log_every 2 --checkpoint " + checkpoint.string();
}

// The job's evaluation line as `log` prints it after `prefix` ("[rank 1] "), or "none".
std::string Evaluation(const std::string& log, const std::string& prefix) {
  const size_t at = log.find(prefix + "epoch 1 test accuracy");
  return at == std::string::npos
             ? std::string("none")
             : log.substr(at + prefix.size(), log.find(" images", at) - at - prefix.size());
}

// Trains with `launched_devices` in each of two processes and with `alone_devices` in one; expects
// the same evaluation on every rank and, for every parameter of the two processes' checkpoint,
// |difference| <= tolerance x the parameter's largest magnitude.
void ExpectTwoProcessesTrainLikeOne(const std::string& launched_devices,
                                    const std::string& alone_devices, float tolerance) {
  const fs::path dir = fs::temp_directory_path() / ("braid_mp_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string launched, alone;
  ASSERT_EQ(Shell(kSameAlgorithms + BraidBinary(BRAID_LAUNCH_BINARY) + " -n 2 -- " +
                      BraidBinary(BRAID_TRAIN_BINARY) + TrainFlags(dir / "two_processes.pb") +
                      " --devices " + launched_devices,
                  &launched),
            0)
      << launched;
  ASSERT_EQ(Shell(kSameAlgorithms + BraidBinary(BRAID_TRAIN_BINARY) +
                      TrainFlags(dir / "one_process.pb") + " --devices " + alone_devices,
                  &alone),
            0)
      << alone;
  // Every rank prints the job's evaluation, the one the single process prints: each rank
  // evaluates its shard of the test set with rank 0's batch-norm statistics.
  EXPECT_NE(Evaluation(alone, ""), "none") << alone;
  EXPECT_EQ(Evaluation(launched, "[rank 0] "), Evaluation(alone, "")) << launched;
  EXPECT_EQ(Evaluation(launched, "[rank 1] "), Evaluation(alone, "")) << launched;

  const auto two = Checkpoint(dir / "two_processes.pb");
  const auto one = Checkpoint(dir / "one_process.pb");
  int compared = 0;
  for (const auto& [name, t] : two) {
    if (t.float_data_size() == 0) continue;
    const auto same = one.find(name);  // cpu_0/... in both
    ASSERT_NE(same, one.end()) << name;
    ASSERT_EQ(same->second.float_data_size(), t.float_data_size()) << name;
    float scale = 1e-6f, worst = 0;
    for (int i = 0; i < t.float_data_size(); ++i) {
      scale = std::max(scale, std::abs(same->second.float_data(i)));
      worst = std::max(worst, std::abs(same->second.float_data(i) - t.float_data(i)));
    }
    EXPECT_LE(worst, tolerance * scale) << name << " (largest magnitude " << scale << ")";
    ++compared;
  }
  EXPECT_GT(compared, 20);
  fs::remove_all(dir);
}

TEST(MultiProcessTrainingTest, TwoProcessesTrainLikeOneProcessWithTwoDevices) {
  // Two ranks add a + b as one process's Allreduce does, and every op has a team of one thread in
  // both runs (oneDNN's bits depend on the team): the same bits.
  ExpectTwoProcessesTrainLikeOne("cpu:0", "cpu:0,cpu:1", 0.f);
}

TEST(MultiProcessTrainingTest, TwoProcessesOfTwoSimulatedGpusTrainLikeOneProcessWithFour) {
  // Each process averages its two devices, then the processes average their means:
  // ((a + b) / 2 + (c + d) / 2) / 2, against one process's pairwise (a + b) + (c + d), times 1/4
  // (ops/collective/pairwise_sum.h). Halving is exact and two partial sums add alike in either
  // order, so the bits agree, whichever kernels the CPU's oneDNN picks for the forward and backward
  // passes (those are the same in both jobs).
  ExpectTwoProcessesTrainLikeOne("sim:0,sim:1", "sim:0,sim:1,sim:2,sim:3", 0.f);
}

}  // namespace
}  // namespace braid
