// DeviceAllreduce: braid's device-side all-reduce, for CUDA ranks that share one physical GPU
// (logical GPUs, runtime/device/device_mapping.h), where NCCL refuses to run (it takes one rank per
// GPU). The CUDA Allreduce (ops/collective/allreduce_op.cu) uses it when ChooseCollectiveEngine
// (runtime/device/collective.h) says kRankKernels.
//
// Every rank is a logical device of one physical GPU, in one process and one CUDA context, so the
// barriers are stream-ordered event edges, queued by one Launch (the op's group launch), with the
// semantics runtime/device/collective.h gives every rank: rank r's stream blocks until every rank
// has arrived, rank r does its share, and its stream blocks again until every rank's share is
// written.
//  1. Arrival: in[r] is recorded on every rank r's stream (behind the writers of its buffer).
//  2. Share: stream r waits on in[q] for every q != r, then rank r's slice kernel sums elements
//     [numel*r/n, numel*(r+1)/n) of every rank's buffer, each element in PairwiseSum's order over
//     the ranks (ops/collective/pairwise_sum.h, the order of the cpu and sim Allreduce: the same
//     bits), times `scale`, and writes the result to every rank's buffer (in place: ranks touch
//     disjoint slices); then out[r] is recorded on stream r.
//  3. Completion: stream r waits on out[q] for every q != r.
// Every in[] is recorded before any wait on it and every out[] before any wait on it, so no wait
// sees an event this launch has not recorded. The events are made once (Prepare) and reused:
// cudaStreamWaitEvent captures the event's latest record when it is called, so the next launch's
// records do not move waits already queued.
// No kernel waits for another (the slice kernel is a plain grid-stride loop, its grid sized by its
// slice), so the collective runs however the GPU schedules the streams: serialised (one stream for
// every rank, CUDA_LAUNCH_BLOCKING=1, compute-sanitizer, Nsight Compute) or concurrently. Streams
// that share a hardware queue (CUDA_DEVICE_MAX_CONNECTIONS) can only be serialised, never
// deadlocked, since no kernel waits for another.
//
//   DeviceAllreduce reduce("Allreduce 'g'", {cuda0, cuda1});      // both on physical GPU 0
//   reduce.Prepare();                                             // makes the events, once
//   reduce.Launch({g0, g1}, numel, /*scale=*/0.5f, {stream0, stream1});   // one launch
//
// Thread safety: one Prepare or Launch at a time (the op's runs are sequential). CUDA-only
// (BRAID_WITH_CUDA).
#ifndef BRAID_OPS_COLLECTIVE_DEVICE_ALLREDUCE_H_
#define BRAID_OPS_COLLECTIVE_DEVICE_ALLREDUCE_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/device.h"

namespace braid {

class DeviceAllreduce {
 public:
  static constexpr int kMaxRanks = 64;

  // For ranks on `devices` (logical CUDA devices of one physical GPU, in rank order: the
  // Allreduce op's are distinct, a test's may repeat one; InvalidArgument otherwise, thrown by
  // Prepare). `what`, unless empty, names the collective in errors (the executors label an op's
  // errors themselves).
  DeviceAllreduce(std::string what, std::vector<Device> devices);
  // Destroys the events; CUDA releases one still pending once the GPU has passed it.
  ~DeviceAllreduce();
  DeviceAllreduce(const DeviceAllreduce&) = delete;
  DeviceAllreduce& operator=(const DeviceAllreduce&) = delete;

  const std::vector<Device>& devices() const { return devices_; }
  // Makes the events on first use (no device memory, no device lock). Throws braid::Error.
  void Prepare();
  // Queues one all-reduce: rank r on streams[r] (rank r's stream may be another rank's too),
  // reducing buffers[0..n) (numel floats each, rank r's on devices()[r]) in place, the sum times
  // `scale`. Throws braid::Error (naming the rank) when a CUDA call fails: a failed arrival queues
  // no kernel; otherwise every stream still waits for every slice kernel that was queued.
  void Launch(const std::vector<float*>& buffers, int64_t numel, float scale,
              const std::vector<cudaStream_t>& streams);

 private:
  // The first CUDA call of a launch that failed.
  struct Failure {
    cudaError_t error = cudaSuccess;
    const char* call = nullptr;
    int rank = 0;
    void Note(cudaError_t e, const char* c, int r);
  };

  // Throws InvalidArgument unless the devices are CUDA devices of one physical GPU.
  void CheckDevices() const;
  std::string Prefix() const;  // "<what>: ", or "" without a name
  // Steps 2 and 3 of the file comment.
  void QueueSlices(const std::vector<float*>& buffers, int64_t numel, float scale,
                   const std::vector<cudaStream_t>& streams, Failure* failure);
  void WaitForSlices(const std::vector<cudaStream_t>& streams, Failure* failure);
  [[noreturn]] void Throw(const Failure& failure) const;

  const std::string what_;
  const std::vector<Device> devices_;
  std::vector<cudaEvent_t> in_;   // by rank; made by Prepare
  std::vector<cudaEvent_t> out_;  // by rank; made by Prepare
};

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_DEVICE_ALLREDUCE_H_
