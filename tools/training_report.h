// TrainingReport: what braid_train --summary_json writes, for scripts (tools/gpu/acceptance.py)
// that compare runs: every progress report's loss, the evaluation, throughput, and each device's
// allocator figures, among them the raw allocations made after the first progress report (with
// --log_every 1: after the first iteration, where a planned net must allocate nothing more).
//
//   TrainingReport report(options.devices);
//   options.on_progress = [&](const TrainingProgress& p) { report.OnProgress(p); };
//   ... trainer->Run(&last) ...
//   report.Write(path, *trainer, options, last);   // throws braid::Error if it cannot write
//
// The JSON: {"model", "executor", "images_per_second", "test_accuracy", "test_loss",
//   "first_run_single_threaded", "first_report_iteration",
//   "progress": [{"iteration", "loss", "accuracy", "learning_rate"}, ...],
//   "devices": [{"device", "physical_device", "planned_bytes", "peak_in_use_bytes",
//                "peak_reserved_bytes", "raw_allocations", "raw_allocations_after_first_report"},
//               ...]}
// (physical_device: the device it runs on, runtime/core/device_context.h PhysicalDevice: "cuda:0"
// for cuda:1 under BRAID_CUDA_DEVICES=0,0)
// (allocator figures are null for cpu devices, whose memory is not cached).
//
// Thread safety: OnProgress is called by the Trainer on the thread that runs it.
#ifndef BRAID_TOOLS_TRAINING_REPORT_H_
#define BRAID_TOOLS_TRAINING_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "braid/trainer.h"

namespace braid {

class TrainingReport {
 public:
  explicit TrainingReport(const std::vector<std::string>& devices);

  void OnProgress(const TrainingProgress& progress);
  void Write(const std::string& path, const Trainer& trainer, const TrainerOptions& options,
             const TrainingProgress& last) const;

 private:
  std::vector<std::string> devices_;
  std::vector<TrainingProgress> progress_;
  std::vector<int64_t> raw_allocations_at_first_report_;  // per device; -1: no cache
};

}  // namespace braid

#endif  // BRAID_TOOLS_TRAINING_REPORT_H_
