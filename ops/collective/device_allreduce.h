// DeviceAllreduce: braid's own device-side all-reduce, for CUDA ranks that share one physical GPU
// (logical GPUs, runtime/device_mapping.h), where NCCL refuses to run (it takes one rank per GPU).
// The CUDA Allreduce (ops/collective/allreduce_op.cu) uses it when ChooseCollectiveEngine
// (runtime/collective.h) says kRankKernels.
//
// One rank kernel per logical device, queued on that device's stream in the group launch, with
// the semantics runtime/collective.h gives every rank kernel: it blocks its stream until every rank
// has arrived, does its share, and blocks again until every rank has done its share.
//  - Flags: `arrived[r]` and `finished[r]` (64-bit counters in device memory, made and zeroed once
//    by Prepare, outside the group launch's device locks) and a generation number per launch,
//    passed to the kernels, so nothing is reset between launches.
//  - Arrival: rank r's block 0 stores arrived[r] = generation (release); thread 0 of every block of
//    every rank spins (acquire loads, __nanosleep backoff) until every arrived[q] >= generation.
//    The rank's inputs are ready then: its stream ran their writers before the kernel started.
//  - Share: rank r sums elements [numel*r/n, numel*(r+1)/n) of every rank's buffer, each element in
//    PairwiseSum's order over the ranks (ops/collective/pairwise_sum.h, the order of the cpu and
//    sim Allreduce: the same bits), times `scale`, and writes it to every rank's buffer (in place:
//    ranks touch disjoint slices). Each block then fences and adds 1 to finished[r] (release).
//  - Completion: rank r's block 0 spins until every finished[q] >= generation x blocks, so the
//    kernel, and the stream behind it, ends only once every slice of its buffer is written.
//  - Co-residency: a rank's grid is max(1, SMs / n) blocks of kThreads, so the n ranks' blocks fit
//    on the GPU at once (a spinning block never starves a peer of the SM it needs), beside the
//    blocks of other kernels and of a few other collectives in flight.
//  - Hardware queues: CUDA multiplexes streams onto CUDA_DEVICE_MAX_CONNECTIONS queues (default
//    8); a rank queued behind work that waits for its peer in a shared queue cannot start. Launch
//    queues every rank back to back, before anything that waits for them, which leaves only other
//    threads' launches in between; the timeout turns what remains into an error, never a hang.
//  - Module loading: Prepare loads the rank kernel (cudaFuncGetAttributes), so that no launch loads
//    it lazily while another rank spins.
//  - Timeout: each wait reads %globaltimer; past `timeout` (default 60 s, like sim's watchdog) the
//    block gives up without writing, and block 0 writes what it waited for (the barrier, the first
//    missing rank, how many were missing, how long) to the rank's record in mapped host memory.
//    Check reads the records once the streams have drained and turns one into DeadlineExceeded
//    naming the collective, the rank, its device and the ranks it waited for. After a timeout the
//    flags no longer match the generations: the collective refuses every later launch.
//
//   DeviceAllreduce reduce("Allreduce 'g'", {cuda0, cuda1});      // both on physical GPU 0
//   reduce.Prepare();                                             // holding no device lock
//   reduce.Launch({g0, g1}, numel, /*scale=*/0.5f, {stream0, stream1});   // one launch
//   ... the streams run ...
//   Status s = reduce.Check();
//
// Thread safety: one launch at a time (the op's runs are sequential); Check after the launch's
// streams have drained. CUDA-only (BRAID_WITH_CUDA).
#ifndef BRAID_OPS_COLLECTIVE_DEVICE_ALLREDUCE_H_
#define BRAID_OPS_COLLECTIVE_DEVICE_ALLREDUCE_H_

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/status.h"

namespace braid {

class DeviceAllreduce {
 public:
  static constexpr int kMaxRanks = 64;
  static constexpr int kThreads = 256;
  static constexpr std::chrono::nanoseconds kDefaultTimeout = std::chrono::seconds(60);

  // For ranks on `devices` (logical CUDA devices of one physical GPU, in rank order: the
  // Allreduce op's are distinct, a test's may repeat one; InvalidArgument otherwise, thrown by
  // Prepare). `what`, unless empty, names the collective in
  // errors (the executors label an op's errors themselves).
  DeviceAllreduce(std::string what, std::vector<Device> devices,
                  std::chrono::nanoseconds timeout = kDefaultTimeout);
  ~DeviceAllreduce();
  DeviceAllreduce(const DeviceAllreduce&) = delete;
  DeviceAllreduce& operator=(const DeviceAllreduce&) = delete;

  const std::vector<Device>& devices() const { return devices_; }
  // Makes the flags and records on first use (an allocation from rank 0's caching allocator and a
  // mapped pinned page, under rank 0's DeviceLock); the caller holds no device lock. Throws
  // braid::Error, or the failure of an earlier launch.
  void Prepare();
  // Queues one launch: every rank r's kernel on streams[r], reducing buffers[0..n) (numel floats
  // each, rank r's on devices()[r]) in place, the sum times `scale`. Throws braid::Error when a
  // launch fails (ranks queued before it then time out, and Check reports it too).
  void Launch(const std::vector<float*>& buffers, int64_t numel, float scale,
              const std::vector<cudaStream_t>& streams);
  // After the launches' streams have drained: OK, or the first rank's timeout (DeadlineExceeded),
  // which every later Prepare and Check return too.
  Status Check();

 // The flags in device memory and a rank's timeout record in mapped host memory (defined with
  // the kernel).
  struct Flags;
  struct Record;

 private:
  // Throws InvalidArgument unless the devices are CUDA devices of one physical GPU.
  void CheckDevices() const;
  std::string Prefix() const;         // "<what>: ", or "" without a name
  std::string DescribeRanks() const;  // "cuda:0, cuda:1 (physical GPU 0)"
  Status Failure(int rank, const Record& record) const;

  const std::string what_;
  const std::vector<Device> devices_;
  const std::chrono::nanoseconds timeout_;
  Flags* flags_ = nullptr;      // device memory, from devices_[0]'s allocator
  Record* records_ = nullptr;   // mapped pinned host memory, one per rank
  Record* device_records_ = nullptr;  // the same, as the device addresses it
  int blocks_ = 0;              // per rank
  uint64_t generation_ = 0;     // of the latest launch
  Status failed_;               // sticky
};

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_DEVICE_ALLREDUCE_H_
