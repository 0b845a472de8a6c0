// braid's public API for serving a model (installed as <braid/predictor.h>).
//
// A Predictor holds a model's parameters once (its init net runs when it is created) and answers
// Run calls from any number of threads at once. Each Run borrows a request context from a pool of
// at most `max_concurrent_runs`: a context holds the predict net built for each input shape it has
// seen, with its activations planned into one arena per context (proven safe for every schedule;
// source: runtime/exec/memory_planning.h), so a context's memory is its
// largest plan, never a copy of the parameters. A Run with input shapes a context has not seen
// builds and plans that net once; later Runs with those shapes allocate nothing. Runs beyond the
// pool's size wait for a context. On a cpu device the Conv filters are stored once in the layout
// oneDNN's convolution reads (source: runtime/models/pack_parameters.h) and activations between
// oneDNN ops stay in its blocked layout (source: runtime/models/blocked_layouts.h): a Run reorders
// neither.
//
// Inputs are views of the caller's memory, on the host or on a device (<braid/tensor_view.h>):
// memory of the device the model runs on (the host for a cpu device) is read in place (a net that
// writes an input blob gets a copy instead); other memory is copied there. Outputs are copied to
// host memory the caller owns (OutputTensor), reusing its buffers across calls, or into the
// caller's own memory, host or device (OutputView): a model on "cuda:0" can take its inputs from
// and give its outputs to the application's GPU buffers without a trip through the host.
//
//   std::unique_ptr<braid::Predictor> predictor;
//   braid::PredictorOptions options;
//   options.max_concurrent_runs = 8;
//   braid::Status s = braid::Predictor::FromModelFolder("resnet50", options, &predictor);
//   std::vector<float> image(1 * 3 * 224 * 224);
//   std::map<std::string, braid::OutputTensor> outputs;
//   if (s.ok()) {
//     s = predictor->Run({{"data", braid::InputView::Of(image.data(), {1, 3, 224, 224})}},
//                        &outputs);
//   }
//   const float* probs = s.ok() ? outputs["softmax"].data<float>() : nullptr;  // null: not float
//   if (probs != nullptr) std::cout << "class 0: " << probs[0] << "\n";
//   if (!s.ok()) std::cerr << s.ToString() << "\n";
//   // The same request with a deadline, answered on the Predictor's threads (RunAsync):
//   braid::RunOptions within_50ms;
//   within_50ms.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
//   if (s.ok()) {
//     std::future<braid::RunResult> pending = predictor->RunAsync(
//         {{"data", braid::InputView::Of(image.data(), {1, 3, 224, 224})}}, within_50ms);
//     braid::RunResult answer = pending.get();  // `image` must stay valid until this returns
//     if (answer.status.code() == braid::StatusCode::kDeadlineExceeded) std::cerr << "too late\n";
//   }
//
// Serving controls (RunOptions, <braid/run_options.h>): a request may carry a deadline and a
// std::stop_token. A request still waiting for a context when its deadline passes returns
// DeadlineExceeded, and one whose token is stopped returns Cancelled, at that moment and without
// running (the wait sleeps on a condition variable, woken by a returned context, the deadline or
// the stop). A running request is checked before each op: once its deadline passes or its token is
// stopped no further op starts (the op running finishes; an op is never interrupted), and it
// returns DeadlineExceeded or Cancelled naming the op it stopped before. A request whose inputs
// are device memory first waits for the application's streams that write them
// (<braid/tensor_view.h>), within its deadline and stop too (then it ends saying it waited for
// them, and did not run). OK means every op ran before the deadline and the stop. RunAsync runs a
// request on the Predictor's own threads and returns a std::future at once.
//
// Errors come back as a Status naming the predictor (its predict net), the input or the op; nothing
// throws across this API. Thread safety: Run and RunAsync may be called concurrently from any
// number of threads; the factories and the accessors are safe too. The Predictor must outlive its
// Runs (a synchronous Run must have returned before it is destroyed); its futures may outlive it:
// destroying it ends the asynchronous requests still waiting with Cancelled (never run) and waits
// for the running ones to finish (their futures get their results).
#ifndef BRAID_PREDICTOR_H_
#define BRAID_PREDICTOR_H_

#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "braid/dtype.h"
#include "braid/run_options.h"
#include "braid/status.h"
#include "braid/tensor_view.h"

namespace braid {

class NetDef;  // proto/braid.pb.h, installed as <braid/braid.pb.h>
struct ModelFolder;

struct PredictorOptions {
  // Where the model runs: "cpu:0", "sim:N" (a simulated GPU) or "cuda:N".
  std::string device = "cpu:0";
  // Request contexts (each with its own activation arena): Runs beyond this many wait.
  int max_concurrent_runs = 1;
  // Executor workers per Run: 1 runs the ops in order (the simple executor), more runs independent
  // ops in parallel (the dag executor).
  int workers_per_run = 1;
  // OpenMP threads each op of a Run uses (its team); 0: the process's (OMP_NUM_THREADS, or every
  // hardware thread), divided among a Run's workers where their ops run side by side
  // (source: runtime/exec/intra_op_threads.h). With one worker per Run, overlapping Runs each run
  // their teams: measured with braid_bench_serving, that served more requests per second than
  // making the Runs take turns at the cores, quiet and beside busy processes alike (README, "Serve
  // a model"). (With several, a Run's ops hold the process's core tokens, which other Runs' ops
  // then wait for.)
  int intra_op_threads = 0;
  // Plan each context's activations into one arena (off: every blob allocates its own memory).
  bool plan_memory = true;
  // Input shapes (signatures: every input's dtype and shape) each context keeps its net built and
  // planned for (at least 2); beyond this many the one used least recently (never the context's
  // first, which owns the arena) is dropped and built again if it comes back.
  int max_input_shapes = 16;
  // Rewrite the predict net when the model is loaded (source: runtime/models/optimize_inference.h):
  // fold each inference SpatialBN that follows a Conv into the Conv's filter and bias, then give
  // each residual Sum/Add and each Relu or Clip that follows a Conv to the Conv's primitive: ops
  // and passes over activations less per layer; outputs change by rounding only. (Folding needs the
  // parameters in host memory: a cpu device.)
  bool optimize_graph = true;
};

// What RunAsync's future holds: the Status Run would return and, when it is OK, every external
// output of the predict net (owned here: move them out).
struct RunResult {
  Status status;
  std::map<std::string, OutputTensor> outputs;
};

// What a Predictor holds, for reports and tests.
struct PredictorMemory {
  int64_t parameter_bytes = 0;    // the init net's blobs, held once
  int contexts = 0;               // request contexts created so far
  int plans = 0;                  // nets built for an input shape so far, over all contexts
  int built_nets = 0;             // of those, the ones held now (max_input_shapes per context)
  int64_t arena_bytes = 0;        // activation arenas held, over all contexts
  int64_t lower_bound_bytes = 0;  // over all contexts: each context's largest plan's lower bound
  int64_t scratch_bytes = 0;      // ops' temporary buffers, over all contexts (source:
                                  // runtime/exec/scratch.h)
};

class Predictor {
 public:
  // A folder in the layout of Caffe2's model zoo: init_net.pb, predict_net.pb, value_info.json
  // (whose inputs' dtypes Run checks).
  static Status FromModelFolder(const std::string& dir, const PredictorOptions& options,
                                std::unique_ptr<Predictor>* predictor);
  // An ONNX model, imported (source: runtime/io/onnx/onnx_import.h) for its input's shape with
  // symbolic dims set to 1. A Reshape whose first dim the export folded to the batch copies the
  // input's, so other batch sizes run; a shape folded from other dims stays fixed.
  static Status FromOnnxFile(const std::string& path, const PredictorOptions& options,
                             std::unique_ptr<Predictor>* predictor);
  // Nets in memory. The inputs are predict_net's external inputs that init_net does not write and
  // that an op touches (or that are external outputs).
  static Status FromNetDefs(const NetDef& init_net, const NetDef& predict_net,
                            const PredictorOptions& options, std::unique_ptr<Predictor>* predictor);

  // Waits for the running asynchronous requests to finish; those still waiting end Cancelled
  // without running. Synchronous Runs must have returned.
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  // Runs the model on `inputs` (every input, by name) and fills *outputs with every external
  // output of the predict net. InvalidArgument for a missing, unknown or mistyped input;
  // DeadlineExceeded or Cancelled when `options` end it early (see the top of this file), with
  // *outputs left unfilled.
  Status Run(const std::map<std::string, InputView>& inputs,
             std::map<std::string, OutputTensor>* outputs, const RunOptions& options) const;
  Status Run(const std::map<std::string, InputView>& inputs,
             std::map<std::string, OutputTensor>* outputs) const {
    return Run(inputs, outputs, RunOptions{});
  }
  // Run, writing outputs into the caller's memory (OutputView, host or device, each written before
  // Run returns): only the outputs *outputs names are written. InvalidArgument for a name that is
  // not an output or a device braid cannot use (before running), or a view of another dtype or too
  // small for its output (after running, before any view is written: every view's shape says what
  // its output is).
  Status Run(const std::map<std::string, InputView>& inputs,
             std::map<std::string, OutputView>* outputs, const RunOptions& options) const;
  Status Run(const std::map<std::string, InputView>& inputs,
             std::map<std::string, OutputView>* outputs) const {
    return Run(inputs, outputs, RunOptions{});
  }
  // The same by position: inputs[i] is input_names()[i], and *outputs gets output_names()[i] at
  // position i (resized; its elements' buffers are reused). InvalidArgument for another count.
  Status Run(const std::vector<InputView>& inputs, std::vector<OutputTensor>* outputs,
             const RunOptions& options = RunOptions{}) const;

  // Run, asynchronously: checks the inputs, queues the request and returns at once. The request
  // runs on the Predictor's own threads (max_concurrent_runs + 1, started by the first RunAsync;
  // one of them watches the queue's deadlines while the others run): asynchronous requests start
  // in the order they came, each when a context is free; synchronous Runs share the contexts in no
  // promised order with them (a busy synchronous caller may take a freed context first). The map
  // is copied, but the memory its views point to stays the caller's: it must stay valid and
  // unchanged until the future is ready (the net may read it in place). The streams writing inputs
  // on a device are marked at the call and waited for by the thread that runs the request. The
  // future's RunResult holds the Status (an invalid input's at once) and owns the outputs, on the
  // host. Never throws.
  std::future<RunResult> RunAsync(std::map<std::string, InputView> inputs,
                                  const RunOptions& options = RunOptions{}) const;

  // The inputs a Run takes and the outputs it gives, in the order positional Runs use.
  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;
  PredictorMemory memory() const;

 private:
  struct State;
  explicit Predictor(std::unique_ptr<State> state);
  // The factories' common part; `dtypes_known`: Run checks the inputs' dtypes against model.inputs.
  static Status FromModel(ModelFolder model, bool dtypes_known, const PredictorOptions& options,
                          std::unique_ptr<Predictor>* predictor);
  std::unique_ptr<State> state_;
};

}  // namespace braid

#endif  // BRAID_PREDICTOR_H_
