// braid's public API for applications that embed it (installed as <braid/session.h>).
//
// A Session owns one workspace: the blobs (tensors) and nets of a model. Load nets from files
// (text ".pbtxt" or binary ".pb", Caffe2-compatible NetDefs), feed inputs, run, fetch outputs.
// Every call returns a braid::Status (<braid/status.h>); nothing throws across this API.
//
//   braid::Session session;
//   braid::Status s = session.SetDevice("sim:0");                  // optional: a simulated GPU
//   if (s.ok()) s = session.RunNetOnce("init.pbtxt");              // fills parameters
//   std::vector<float> pixels(784, 0.5f);
//   if (s.ok()) s = session.Feed("data", {1, 784}, pixels);        // float32 input
//   std::string net_name;
//   if (s.ok()) s = session.LoadNet("predict.pbtxt", &net_name);   // reads "data"
//   if (s.ok()) s = session.RunNet(net_name);
//   std::vector<int64_t> shape;
//   std::vector<float> probs;
//   if (s.ok()) s = session.Fetch("softmax", &shape, &probs);
//   if (!s.ok()) std::cerr << s.ToString() << "\n";
//
// Any dtype (<braid/tensor_view.h>), and a run that may end early (<braid/run_options.h>):
//
//   std::vector<int64_t> ids = {7, 2};
//   s = session.Feed("ids", braid::InputView::Of(ids.data(), {2}));  // int64 [2], copied in
//   braid::RunOptions options;
//   options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
//   if (s.ok()) s = session.RunNet(net_name, /*iterations=*/1, options);
//   braid::OutputTensor out;
//   if (s.ok()) s = session.Fetch("argmax", &out);                   // out.dtype says which
//
// Thread safety: every method may be called from any thread at any time, with these rules:
//  - A net runs one Run at a time: a RunNet of a net that is running returns FailedPrecondition.
//  - PlanMemory of a net, and LoadNet of a name already loaded, wait until that net's running Run
//    ends (and hold its next Run until they are done); a net LoadNet replaces finishes its Run.
//  - Blobs are the caller's to order: a Feed or Fetch of a blob, a PlanMemory or LoadNet of a net
//    whose blobs another net's Run is writing, or a RunNet of two nets writing one blob, must not
//    overlap (braid does not lock tensors; source: runtime/core/tensor.h).
#ifndef BRAID_SESSION_H_
#define BRAID_SESSION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "braid/run_options.h"
#include "braid/status.h"
#include "braid/tensor_view.h"

namespace braid {

class Workspace;
class NetDef;

class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Nets loaded or run from now on run on `device` ("cpu:0", or "sim:1": a simulated GPU) unless
  // they or their ops name a device, and Feed puts new blobs there. InvalidArgument for a device
  // braid cannot use.
  Status SetDevice(const std::string& device);
  // Loads, runs once and discards a net (typically an init net).
  Status RunNetOnce(const std::string& net_path);
  // Loads and builds a net kept in the session; its name is returned in *net_name.
  Status LoadNet(const std::string& net_path, std::string* net_name);
  // Runs a loaded net `iterations` times, stopping at the first error. With `options`, every
  // iteration checks the one deadline and stop token before each op: once either fires, no further
  // op starts and RunNet returns DeadlineExceeded or Cancelled naming the op it stopped before
  // (the blobs then hold what the ops that ran wrote). They bound the run, not the wait for a
  // PlanMemory or LoadNet of the net that holds it. A net with collectives across processes must
  // not be stopped on one rank alone: its peers would wait in the collective it never joins.
  Status RunNet(const std::string& net_name, int iterations = 1);
  Status RunNet(const std::string& net_name, int iterations, const RunOptions& options);
  // Plans a loaded net's memory: blobs it only uses inside a run share one arena per device, sized
  // once, so later runs allocate nothing (proven safe for every schedule). Call it after feeding
  // the inputs (their shapes size the plan). Afterwards only the net's external outputs (and its
  // inputs) are meaningful to Fetch. *planned_bytes / *naive_bytes, when given, report the arena
  // size and what the planned blobs would take unshared.
  Status PlanMemory(const std::string& net_name, int64_t* planned_bytes = nullptr,
                    int64_t* naive_bytes = nullptr);

  // Copies float32 data of the given shape into blob `name`, on the device it is on (a blob without
  // data yet: the session's device).
  Status Feed(const std::string& name, const std::vector<int64_t>& shape,
              const std::vector<float>& values);
  // Copies a float32 blob out, from whichever device it is on; InvalidArgument for another dtype.
  Status Fetch(const std::string& name, std::vector<int64_t>* shape,
               std::vector<float>* values) const;
  // The same in any dtype: Feed copies the view's elements (read during the call only, once the
  // work on its stream has run, when it is on a device) into blob `name` on the device it is on (a
  // blob without data yet: the session's device), as the view's dtype and shape; Fetch copies the
  // blob, whatever its dtype, into *output (its buffer reused) or into the caller's memory, host
  // or device (OutputView, written when Fetch returns). InvalidArgument for a negative dim, a shape
  // too large or without data, a device braid cannot use, or an OutputView too small (its dtype
  // and shape then say what it needs).
  Status Feed(const std::string& name, const InputView& input);
  Status Fetch(const std::string& name, OutputTensor* output) const;
  Status Fetch(const std::string& name, OutputView* output) const;
  // Names of the session's blobs, sorted.
  std::vector<std::string> BlobNames() const;

 private:
  struct LoadedNet;  // a net, its memory plan and who may use it (session.cc)

  // The net at `path`, on the session's device unless it names one.
  Status LoadOnDevice(const std::string& path, NetDef* def) const;
  std::shared_ptr<LoadedNet> FindNet(const std::string& name) const;
  std::string device() const;  // device_, read under mu_

  const std::unique_ptr<Workspace> workspace_;  // blobs; its own mutex guards their lookup
  // Held by LoadNet to build and publish. Lock order: a net's use, load_mu_, mu_.
  std::mutex load_mu_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<LoadedNet>> nets_;  // guarded by mu_
  std::string device_;                                       // guarded by mu_; "" : the host
};

}  // namespace braid

#endif  // BRAID_SESSION_H_
