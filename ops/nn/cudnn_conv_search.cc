// ChooseCudnnConvAlgorithm (ops/nn/cudnn_conv.h): cuDNN's heuristic and find behind the
// AlgorithmRegistry's candidate model.
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "ops/common/cuda_kernel.h"
#include "ops/nn/cudnn_conv.h"
#include "runtime/device/algorithm_registry.h"

namespace braid {
namespace {

using Direction = CudnnConvDirection;

// One entry of cuDNN's perf results, whichever the direction.
struct PerfResult {
  int algo = 0;
  cudnnStatus_t status = CUDNN_STATUS_NOT_SUPPORTED;
  float time_ms = 0;
  cudnnDeterminism_t determinism = CUDNN_NON_DETERMINISTIC;  // as cuDNN reports it for the shape
};

template <typename Perf>
std::vector<PerfResult> ResultsOf(const std::vector<Perf>& perf, int count) {
  std::vector<PerfResult> out;
  for (int i = 0; i < count && i < static_cast<int>(perf.size()); ++i) {
    out.push_back(
        {static_cast<int>(perf[i].algo), perf[i].status, perf[i].time, perf[i].determinism});
  }
  return out;
}

// cuDNN's heuristic: every algorithm with its status, most promising first.
std::vector<PerfResult> HeuristicResults(const CudnnConvDescriptors& d, Direction direction) {
  cudnnHandle_t h = CudnnHandle();
  int max = 0, n = 0;
  switch (direction) {
    case Direction::kForward: {
      CheckCudnn(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max),
                 "cudnnGetConvolutionForwardAlgorithmMaxCount");
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(max);
      CheckCudnn(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.filter.get(), d.conv.get(),
                                                        d.y.get(), max, &n, perf.data()),
                 "cudnnGetConvolutionForwardAlgorithm_v7");
      return ResultsOf(perf, n);
    }
    case Direction::kBackwardData: {
      CheckCudnn(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max),
                 "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(max);
      CheckCudnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                     h, d.filter.get(), d.y.get(), d.conv.get(), d.x.get(), max, &n, perf.data()),
                 "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      return ResultsOf(perf, n);
    }
    case Direction::kBackwardFilter: {
      CheckCudnn(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max),
                 "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(max);
      CheckCudnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                     h, d.x.get(), d.y.get(), d.conv.get(), d.filter.get(), max, &n, perf.data()),
                 "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
      return ResultsOf(perf, n);
    }
  }
  return {};
}

// cuDNN's find: runs every algorithm on `b` with `workspace` and times it, fastest first.
std::vector<PerfResult> FindResults(const CudnnConvDescriptors& d, Direction direction,
                                    const CudnnConvBuffers& b, void* workspace, size_t bytes) {
  cudnnHandle_t h = CudnnHandle();
  int max = 0, n = 0;
  switch (direction) {
    case Direction::kForward: {
      CheckCudnn(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max),
                 "cudnnGetConvolutionForwardAlgorithmMaxCount");
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(max);
      CheckCudnn(cudnnFindConvolutionForwardAlgorithmEx(h, d.x.get(), b.x, d.filter.get(), b.filter,
                                                        d.conv.get(), d.y.get(), b.out, max, &n,
                                                        perf.data(), workspace, bytes),
                 "cudnnFindConvolutionForwardAlgorithmEx");
      return ResultsOf(perf, n);
    }
    case Direction::kBackwardData: {
      CheckCudnn(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max),
                 "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(max);
      CheckCudnn(cudnnFindConvolutionBackwardDataAlgorithmEx(
                     h, d.filter.get(), b.filter, d.y.get(), b.dy, d.conv.get(), d.x.get(), b.out,
                     max, &n, perf.data(), workspace, bytes),
                 "cudnnFindConvolutionBackwardDataAlgorithmEx");
      return ResultsOf(perf, n);
    }
    case Direction::kBackwardFilter: {
      CheckCudnn(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max),
                 "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(max);
      CheckCudnn(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                     h, d.x.get(), b.x, d.y.get(), b.dy, d.conv.get(), d.filter.get(), b.out, max,
                     &n, perf.data(), workspace, bytes),
                 "cudnnFindConvolutionBackwardFilterAlgorithmEx");
      return ResultsOf(perf, n);
    }
  }
  return {};
}

// The workspace `algo` needs, or nullopt when cuDNN does not support it for `d`.
std::optional<size_t> WorkspaceBytes(const CudnnConvDescriptors& d, Direction direction, int algo) {
  cudnnHandle_t h = CudnnHandle();
  size_t bytes = 0;
  cudnnStatus_t status = CUDNN_STATUS_NOT_SUPPORTED;
  switch (direction) {
    case Direction::kForward:
      status = cudnnGetConvolutionForwardWorkspaceSize(
          h, d.x.get(), d.filter.get(), d.conv.get(), d.y.get(),
          static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes);
      break;
    case Direction::kBackwardData:
      status = cudnnGetConvolutionBackwardDataWorkspaceSize(
          h, d.filter.get(), d.y.get(), d.conv.get(), d.x.get(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes);
      break;
    case Direction::kBackwardFilter:
      status = cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, d.x.get(), d.y.get(), d.conv.get(), d.filter.get(),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes);
      break;
  }
  if (status != CUDNN_STATUS_SUCCESS) return std::nullopt;
  return bytes;
}

struct Supported {
  int algo = 0;
  size_t workspace_bytes = 0;
};

// One run of cuDNN's find for all candidates, made by the first candidate whose time the registry
// asks (SearchMode::kMeasure only), read by the others.
class FindRun {
 public:
  FindRun(const CudnnConvDescriptors& d, Direction direction, const CudnnConvBuffers& buffers,
          std::vector<Supported> candidates, int64_t limit)
      : d_(d),
        direction_(direction),
        buffers_(buffers),
        candidates_(std::move(candidates)),
        limit_(limit) {}

  double TimeMs(int algo) {
    if (!ran_) Run();
    const auto it = ms_.find(algo);
    return it == ms_.end() ? std::numeric_limits<double>::infinity() : it->second;
  }

 private:
  void Run() {
    ran_ = true;
    size_t bytes = 0;  // the largest candidate that fits, so that every one that fits can run
    for (const Supported& c : candidates_) {
      if (limit_ < 0 || static_cast<int64_t>(c.workspace_bytes) <= limit_) {
        bytes = std::max(bytes, c.workspace_bytes);
      }
    }
    // A segment made for it goes back to the device after the search, not to the cache: no later
    // run needs a block this large.
    DeviceScratch workspace(bytes, DeviceScratch::Release::kToDevice);
    for (const PerfResult& r : FindResults(d_, direction_, buffers_, workspace.get(), bytes)) {
      if (r.status == CUDNN_STATUS_SUCCESS && r.time_ms >= 0) ms_.emplace(r.algo, r.time_ms);
    }
    for (const Supported& c : candidates_) {
      if (ms_.count(c.algo) > 0) return;
    }
    throw Error(Status::Internal(
        std::string("cuDNN's find ran none of the ") + CudnnConvDirectionName(direction_) +
        " convolution's candidates with a workspace of " + std::to_string(bytes) + " bytes"));
  }

  const CudnnConvDescriptors& d_;
  const Direction direction_;
  const CudnnConvBuffers buffers_;
  const std::vector<Supported> candidates_;
  const int64_t limit_;
  bool ran_ = false;
  std::map<int, double> ms_;  // algorithm -> its fastest successful time
};

// The heuristic's supported algorithms in its order; with `deterministic`, the deterministic ones
// only unless there are none (deterministic: neither in the documented table of atomic algorithms
// nor reported otherwise).
std::vector<Supported> SupportedAlgorithms(const CudnnConvDescriptors& d, Direction direction,
                                           bool deterministic_only) {
  std::vector<Supported> deterministic, any;
  for (const PerfResult& r : HeuristicResults(d, direction)) {
    if (r.status != CUDNN_STATUS_SUCCESS) continue;
    const bool seen =
        std::any_of(any.begin(), any.end(), [&r](const Supported& s) { return s.algo == r.algo; });
    if (seen) continue;  // listed again with another math type
    const std::optional<size_t> bytes = WorkspaceBytes(d, direction, r.algo);
    if (!bytes) continue;
    any.push_back({r.algo, *bytes});
    // The documented table names the algorithms that always add with atomics; cuDNN's own report
    // for this shape also catches the ones that do so only for some shapes.
    if (!CudnnConvAlgorithmIsNondeterministic(direction, r.algo) &&
        r.determinism == CUDNN_DETERMINISTIC) {
      deterministic.push_back(any.back());
    }
  }
  return deterministic_only && !deterministic.empty() ? deterministic : any;
}

// With exhaustive_search = 0 the heuristic's first candidate that fits, alone (the registry
// takes a lone candidate untimed); all of them when none fits, for the registry's error.
std::vector<AlgorithmCandidate> HeuristicCandidate(const std::vector<Supported>& supported,
                                                   Direction direction, int64_t limit) {
  for (const Supported& s : supported) {
    if (limit < 0 || static_cast<int64_t>(s.workspace_bytes) <= limit) {
      return {{CudnnConvAlgorithmName(direction, s.algo), static_cast<int64_t>(s.workspace_bytes),
               nullptr}};
    }
  }
  std::vector<AlgorithmCandidate> all;
  for (const Supported& s : supported) {
    all.push_back({CudnnConvAlgorithmName(direction, s.algo),
                   static_cast<int64_t>(s.workspace_bytes), nullptr});
  }
  return all;
}

std::vector<AlgorithmCandidate> FindCandidates(const CudnnConvDescriptors& d, Direction direction,
                                               const CudnnConvBuffers& buffers, int64_t limit,
                                               const ConvSearchOptions& options) {
  const std::vector<Supported> supported = SupportedAlgorithms(d, direction, options.deterministic);
  if (!options.timed) return HeuristicCandidate(supported, direction, limit);
  const auto find = std::make_shared<FindRun>(d, direction, buffers, supported, limit);
  std::vector<AlgorithmCandidate> candidates;
  for (const Supported& s : supported) {
    const int algo = s.algo;
    candidates.push_back({CudnnConvAlgorithmName(direction, algo),
                          static_cast<int64_t>(s.workspace_bytes),
                          [find, algo] { return find->TimeMs(algo); }});
  }
  return candidates;
}

}  // namespace

CudnnConvAlgorithm ChooseCudnnConvAlgorithm(const CudnnConvProblem& p,
                                            const CudnnConvDescriptors& d,
                                            CudnnConvDirection direction,
                                            const CudnnConvBuffers& buffers, const Device& device,
                                            const ConvSearchOptions& options) {
  std::string key = CudnnConvAlgorithmKey(p, direction, CudnnGpuDescription(device),
                                         cudnnGetVersion(), CudaTf32Allowed());
  if (!options.timed) key += "|search=heuristic";  // exhaustive_search = 0 chooses otherwise
  if (options.deterministic) key += "|deterministic";  // so does deterministic = 1
  const AlgorithmRequest request{
      key, device, ConvWorkspaceLimit(SearchWorkspaceLimit(device), options.workspace_limit)};
  const AlgorithmChoice choice = AlgorithmRegistry::Global().Choose(request, [&] {
    return FindCandidates(d, direction, buffers, request.workspace_limit, options);
  });
  const int algo = CudnnConvAlgorithmNamed(direction, choice.algorithm);
  if (algo < 0) {
    throw Error(Status::InvalidArgument(
        "algorithm registry: key '" + request.key + "' has algorithm '" + choice.algorithm +
        "', which cuDNN's " + CudnnConvDirectionName(direction) + " convolution does not have"));
  }
  const std::optional<size_t> bytes = WorkspaceBytes(d, direction, algo);
  if (!bytes) {
    throw Error(Status::Internal("algorithm registry: cuDNN does not support algorithm '" +
                                 choice.algorithm + "' chosen for key '" + request.key + "'"));
  }
  return {algo, *bytes};
}

}  // namespace braid
