// PredictorContext: one request context of a Predictor (include/braid/predictor.h). For each input
// signature (the inputs' dtypes and shapes) it has seen, it keeps a child workspace of the shared
// parameters, the predict net built there (on a cpu device with its activations between oneDNN ops
// blocked for those shapes, runtime/models/blocked_layouts.h) and that net's memory plan, for at
// most spec.max_input_shapes signatures (the least recently used beyond them is dropped; never the
// first). Every plan of a context is made into the arenas of its first (they never run at once):
// when a new plan grows them, the plans made earlier are bound to the grown arenas again, so the
// context holds one arena per device, the size of its largest plan.
//
//   PredictorContext context(&parameters, &spec);
//   context.Run(inputs, writers, RunStop{}, [&](const OutputValues& values) {
//     for (const auto& [name, value] : values) CopyOut(*value, &outputs[name]);
//   });                                 // builds and plans a new signature, feeds, runs, delivers
//
// Thread safety: none; one thread at a time (the Predictor's pool lends a context to one Run). The
// parameters workspace and the spec must outlive the context and stay unchanged.
#ifndef BRAID_RUNTIME_SERVE_PREDICTOR_CONTEXT_H_
#define BRAID_RUNTIME_SERVE_PREDICTOR_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "braid/predictor.h"
#include "proto/braid.pb.h"
#include "runtime/core/device.h"
#include "runtime/exec/run_stop.h"
#include "runtime/serve/tensor_views.h"

namespace braid {

class Net;
class NetMemory;
class Tensor;
class Workspace;

// What every context of one Predictor runs: the predict net (its device, executor and workers
// already set), its inputs in order and what may read them in place.
struct PredictorSpec {
  NetDef predict_net;
  Device device;
  bool plan_memory = true;
  int max_input_shapes = 16;  // signatures a context keeps built (>= 2)
  std::vector<std::string> input_names;
  std::set<std::string> inputs_the_net_writes;  // fed as copies, never as the caller's memory
  std::vector<std::string> output_names;
};

// Receives the outputs of a Run, by name: tensors of the context, valid during the call only (copy
// them out). Throws braid::Error to fail the Run.
using OutputValues = std::map<std::string, const Tensor*>;
using OutputSink = std::function<void(const OutputValues& values)>;

class PredictorContext {
 public:
  PredictorContext(const Workspace* parameters, const PredictorSpec* spec);
  ~PredictorContext();
  PredictorContext(const PredictorContext&) = delete;
  PredictorContext& operator=(const PredictorContext&) = delete;

  // Waits for `writers` (the applications' streams writing the inputs, runtime/serve/
  // tensor_views.h), feeds `inputs` (checked by the caller: every input name, valid shapes and
  // devices), runs the net built for their signature and hands every external output to
  // `deliver`. Inputs in memory of the net's device (the host for a cpu device) are read in place
  // unless the net writes them; others are copied there. Throws
  // braid::Error; DeadlineExceeded or Cancelled when `stop` fires during the wait, before an op
  // (the net stops there) or by the end of the net (then nothing is delivered).
  void Run(const std::map<std::string, InputView>& inputs, const StreamMarks& writers,
           const RunStop& stop, const OutputSink& deliver);

  // Read from any thread (while another runs the context): the plans made so far, the nets held
  // now, the bytes of the arenas held (each once, however many plans share it), the largest lower
  // bound of the plans made into them, and the scratch areas (ops' temporary buffers,
  // runtime/exec/scratch.h) of its nets as of their last Run.
  int plans() const { return plans_.load(); }
  int built_nets() const { return built_nets_.load(); }
  int64_t arena_bytes() const { return arena_bytes_.load(); }
  int64_t lower_bound_bytes() const { return lower_bound_bytes_.load(); }
  int64_t scratch_bytes() const { return scratch_bytes_.load(); }

 private:
  struct Prepared {
    std::unique_ptr<Workspace> ws;
    Net* net = nullptr;  // owned by ws
    std::unique_ptr<NetMemory> memory;
    // spec->input_names' blobs in ws. An input blob views memory only when a caller lent it (fed
    // in place; inputs are never planned into an arena). Such a view outlives its call but is
    // never read or written after it: the next Feed replaces it, or drops it before copying into
    // the blob (which would otherwise write through it).
    std::vector<Tensor*> inputs;
    uint64_t last_used = 0;  // the Run count when it last ran
  };

  Prepared& FindOrPrepare(const std::map<std::string, InputView>& inputs);
  // Drops the least recently used signature but the first, when max_input_shapes are held.
  void MakeRoomForOneMore();
  // Plans `prepared` into the first plan's arenas (growing them) and, when they grew, binds every
  // other plan to the grown arenas again; then counts the arenas' bytes.
  void Plan(Prepared* prepared);
  // Sets the input blobs from `inputs`, which Run's caller checked.
  void Feed(const std::map<std::string, InputView>& inputs, const Prepared& prepared);

  const Workspace* parameters_;
  const PredictorSpec* spec_;
  std::map<std::string, Prepared> prepared_;  // by input signature
  NetMemory* arena_owner_ = nullptr;          // the first plan; later ones use its arenas
  uint64_t runs_ = 0;
  std::atomic<int> plans_{0};
  std::atomic<int> built_nets_{0};
  std::atomic<int64_t> arena_bytes_{0};
  std::atomic<int64_t> lower_bound_bytes_{0};
  std::atomic<int64_t> scratch_bytes_{0};
};

}  // namespace braid

#endif  // BRAID_RUNTIME_SERVE_PREDICTOR_CONTEXT_H_
