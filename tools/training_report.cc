#include "tools/training_report.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "braid/status.h"
#include "runtime/core/device.h"
#include "runtime/core/device_context.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/exec/net_args.h"

namespace braid {
namespace {

using Json = nlohmann::ordered_json;

int64_t RawAllocations(const std::string& device) {
  const CachingAllocator* allocator = CachingAllocatorOf(ParseDevice(device));
  return allocator == nullptr ? -1 : allocator->stats().raw_allocations;
}

Json DeviceFigures(const std::string& device, int64_t raw_at_first_report,
                   const TrainingSummary& summary) {
  const Device parsed = ParseDevice(device);
  Json d = {{"device", device},
            {"physical_device", PhysicalDevice(parsed).ToString()},
            {"planned_bytes", nullptr}, {"peak_in_use_bytes", nullptr},
            {"peak_reserved_bytes", nullptr}, {"raw_allocations", nullptr},
            {"raw_allocations_after_first_report", nullptr}};
  for (const TrainingSummary::Arena& arena : summary.arenas) {
    if (arena.device == device) d["planned_bytes"] = arena.planned_bytes;
  }
  const CachingAllocator* allocator = CachingAllocatorOf(parsed);
  if (allocator == nullptr) return d;
  const AllocatorStats a = allocator->stats();
  d["peak_in_use_bytes"] = a.peak_bytes_in_use;
  d["peak_reserved_bytes"] = a.peak_bytes_reserved;
  d["raw_allocations"] = a.raw_allocations;
  if (raw_at_first_report >= 0) {
    d["raw_allocations_after_first_report"] = a.raw_allocations - raw_at_first_report;
  }
  return d;
}

}  // namespace

TrainingReport::TrainingReport(const std::vector<std::string>& devices) : devices_(devices) {}

void TrainingReport::OnProgress(const TrainingProgress& progress) {
  if (progress.evaluated) return;  // an evaluation, not a training report
  if (progress_.empty()) {
    for (const std::string& device : devices_) {
      raw_allocations_at_first_report_.push_back(RawAllocations(device));
    }
  }
  progress_.push_back(progress);
}

void TrainingReport::Write(const std::string& path, const Trainer& trainer,
                           const TrainerOptions& options, const TrainingProgress& last) const {
  const TrainingSummary summary = trainer.Summary();
  Json report = {
      {"model", options.model},
      {"executor", options.execution.executor},
      {"images_per_second", summary.images_per_second},
      {"test_accuracy", last.evaluated ? Json(last.test_accuracy) : Json()},
      {"test_loss", last.evaluated ? Json(last.test_loss) : Json()},
      {"first_run_single_threaded",
       options.execution.executor != "dag" || FirstRunIsSingleThreaded(trainer.train_net())},
      {"first_report_iteration", progress_.empty() ? Json() : Json(progress_[0].iteration)},
      {"progress", Json::array()},
      {"devices", Json::array()}};
  for (const TrainingProgress& p : progress_) {
    report["progress"].push_back({{"iteration", p.iteration}, {"loss", p.loss},
                                  {"accuracy", p.accuracy}, {"learning_rate", p.learning_rate}});
  }
  for (size_t i = 0; i < devices_.size(); ++i) {
    const int64_t at_first = i < raw_allocations_at_first_report_.size()
                                 ? raw_allocations_at_first_report_[i]
                                 : -1;
    report["devices"].push_back(DeviceFigures(devices_[i], at_first, summary));
  }
  std::ofstream out(path);
  out << report.dump(2) << "\n";
  if (!out) throw Error(Status::InvalidArgument("braid_train: cannot write --summary_json " + path));
}

}  // namespace braid
