// The rows of braid_bench_training and how one row is timed.
//
// A row is a ResNet (runtime/models/resnet.h) at one input shape and batch size, in one mode:
//   train  the train net of BuildTrainingNets (synthetic IdxImageInput reader, forward, loss,
//          gradients, Iter, LearningRate, one MomentumSGDUpdate per parameter), data parallel
//          (runtime/models/data_parallel.h) when options.devices lists several: the batch is split;
//   infer  its test net (SpatialBN is_test=1, no gradients), with only the parameters it reads,
//          on the first device.
// RunBenchRow builds the row's nets in a fresh workspace, plans their memory (unless
// options.memory_plan is false), runs `warmup` untimed iterations (the
// first one allocates), then timed iterations until both `min_iters` and `min_seconds` are reached
// (or `max_iters`), and reports the median iteration time.
//
//   const BenchRow* row = FindBenchRow("resnet50-b32-train");
//   RowTiming t = RunBenchRow(*row, {.threads = 2, .executor = "simple"});
//   std::printf("%.1f images/s\n", t.images_per_second);
//
// Peak memory is the process's (getrusage), so a process should run one row; braid_bench_training
// runs each row in its own child process.
//
// Errors: a failing op or an invalid net throws braid::Error.
// Thread safety: RunBenchRow uses its own workspace; the row table is immutable.
#ifndef BRAID_TOOLS_BENCH_TRAINING_ROWS_H_
#define BRAID_TOOLS_BENCH_TRAINING_ROWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/device.h"

namespace braid::bench {

struct BenchRow {
  std::string model;  // a ResNetSpecFromName name
  int64_t channels = 3;
  int64_t image_size = 224;  // height and width
  int64_t batch = 32;
  int64_t classes = 1000;
  bool training = true;

  const char* mode() const { return training ? "train" : "infer"; }
  // "resnet50-b32-train": what --rows matches and --row names.
  std::string name() const;
  // "3x224x224"
  std::string input() const;
};

// resnet20 1x28x28 b64; resnet18 3x224x224 b8 and b32; resnet50 3x224x224 b1, b8 and b32; each in
// train and infer mode.
const std::vector<BenchRow>& BenchRows();
// The row called `name`, or null.
const BenchRow* FindBenchRow(const std::string& name);

struct RowOptions {
  int threads = 2;  // the net's num_workers
  std::string executor = "simple";
  // cpu:N, sim:N or cuda:N devices (one type); several: data parallel.
  std::vector<Device> devices{Device{}};
  int warmup = 1;
  int min_iters = 2;
  int max_iters = 200;
  double min_seconds = 5;
  bool profile = false;  // collect an OpTypeProfile of the timed iterations
  // Bind the net's recyclable blobs into a planned arena (runtime/exec/memory_planning.h), as
  // braid_train does by default.
  bool memory_plan = true;
  // Recompute SpatialBN + Relu outputs in the backward pass (runtime/models/recompute.h), as
  // braid_train does; only with memory_plan, without which it saves nothing.
  bool recompute = true;
  // With recompute: also recompute convolutions until the train net's planned arena is within
  // this many bytes (BuildTrainingNetsWithinArena, runtime/models/training_footprint.h), as
  // braid_train --recompute-budget does; 0: none.
  int64_t recompute_budget = 0;
  // Keep activations between oneDNN ops blocked (runtime/models/blocked_layouts.h), as braid_train
  // does.
  bool blocked_layouts = true;
};

struct RowTiming {
  int iterations = 0;
  double seconds = 0;         // all timed iterations
  double median_seconds = 0;  // one iteration
  double images_per_second = 0;
  double setup_seconds = 0;      // building the nets, the init net and the warm-up iterations
  float loss = 0;                // of the last iteration, to show the run stayed finite
  int64_t trainable_params = 0;  // to check another framework's copy of the model
  // Bytes held by the workspace's blobs after the run (each storage counted once): parameters,
  // momenta and the counter (what the init net made); blobs named *_grad*; everything else
  // (activations, the reader's batch). The rest of the peak RSS is the scratch areas (below), the
  // libraries, oneDNN's primitives and the allocator's slack.
  int64_t param_bytes = 0;
  int64_t gradient_bytes = 0;
  int64_t activation_bytes = 0;
  // With a memory plan: the arena the planned blobs live in (the gradient and activation bytes
  // above then count each planned blob's own size, before sharing). 0 without one.
  int64_t arena_bytes = 0;
  // The net's scratch areas (runtime/exec/scratch.h): ops' temporary buffers, one area per worker.
  int64_t scratch_bytes = 0;
  // Devices other than the host (sim, cuda): device 0's caching allocator's peaks
  // (runtime/device/caching_allocator.h), what PyTorch's max_memory_allocated / _reserved report,
  // over the timed iterations (restarted after the warm-up), and the reserved peak of the setup and
  // warm-up (the first iteration's algorithm searches and their workspaces included).
  int64_t device_peak_in_use_bytes = 0;
  int64_t device_peak_reserved_bytes = 0;
  int64_t device_warmup_peak_reserved_bytes = 0;
  std::string profile;  // OpTypeProfile::Table() when options.profile
};

RowTiming RunBenchRow(const BenchRow& row, const RowOptions& options);

// Peak resident set size of this process in bytes (getrusage(RUSAGE_SELF).ru_maxrss).
int64_t PeakRssBytes();

}  // namespace braid::bench

#endif  // BRAID_TOOLS_BENCH_TRAINING_ROWS_H_
