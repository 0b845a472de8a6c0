// ReplicateForDevices: single-device training nets made data parallel over several devices.
//
// Like Caffe2's data_parallel_model, every device gets its own copy of the forward and backward
// pass, parameters, momenta, iteration counter and learning rate, each blob named under the
// device's scope ("cpu_0/conv1_w", "sim_1/conv1_w", "gpu_0/..." for cuda) and each op carrying its
// device option (host-only ops, the readers, stay on the host).
//   init   device 0's fills, then one Copy per blob from device 0 to every other device, so all
//          devices start from identical parameters (a broadcast from device 0).
//   train  the reader (on the host, or on cpu device 0) reads the global batch and one Split per
//          output, beside it, cuts it into equal per-device batches; on a device that is not the
//          host, the replica starts with one CopyCPUToGPU per piece (from BuildTrainingNets);
//          each device's forward and backward; one Allreduce per parameter gradient
//          (ops/collective/allreduce_op.h, averaging, so the update equals one device training
//          on the whole batch); each device's Iter, LearningRate and updates.
//   test   on device 0, reading device 0's parameters.
// The Allreduces run in one global order, the order their gradients are ready in the backward
// pass: each names the previous one's first output as a control input, as Caffe2's
// data_parallel_model chained its all-reduces. Every executor keeps that order on every device,
// and a rank kernel waiting for its peers (runtime/device/collective.h) never waits for a
// collective that some device queued behind another.
//
//   TrainingNets single = BuildTrainingNets(spec);        // reader batch: the global batch
//   TrainingNets dp = ReplicateForDevices(single, {cpu0, cpu1});
//   dp.OnDevice(1, dp.loss);                               // "cpu_1/loss"
//
// Throws braid::Error when there are no devices or the train net lacks its reader.
// Thread safety: pure functions of their arguments.
#ifndef BRAID_RUNTIME_MODELS_DATA_PARALLEL_H_
#define BRAID_RUNTIME_MODELS_DATA_PARALLEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/models/training_nets.h"

namespace braid {

// The processes of a multi-process job (runtime/dist/process_group.h) the nets are one rank of.
// With world_size > 1 the gradients, in the order they are ready, go in buckets of at most
// `bucket_bytes` (a larger gradient alone; 0: one per gradient) to one ProcessAllreduce each
// (ops/collective/process_allreduce_op.h), which all-reduces them across the processes with
// `algorithm` ("ring" or "halving_doubling") and averages them over the job:
//   cpu devices    the ProcessAllreduce sums this process's devices itself and writes every one;
//   sim, cuda      each gradient's Allreduce over the devices first (as in one process), then
//                  CopyGPUToCPU of device 0's mean to "host/<gradient>", the ProcessAllreduce of
//                  the host copies, and CopyCPUToGPU back to every device.
// Every rank has weight 1 in the ProcessAllreduce's mean: each reads batch_size / world_size
// examples, split evenly over its devices, so the mean of the ranks' means is the mean over the
// global batch, however many devices each rank holds.
// Each ProcessAllreduce's `tag`, its bucket's place in the ready order, is the same on every rank
// and unique among the net's collectives, as Gloo requires of collectives that may run at once;
// they are chained in that order like the device Allreduces. A mix of cpu and other devices in
// one process is refused. With `nccl` (cuda devices only) the ProcessAllreduces run on cuda
// device 0 and take every device's gradients, as on cpu devices: its NCCL engine reduces every
// GPU of every process at once (one communicator, tag 0 on every bucket, whose unique id rank 0
// shares through the rendezvous store), with no device Allreduces, no host copies and no Gloo;
// every process must then hold as many devices.
struct ProcessScaleOut {
  int world_size = 1;
  std::string algorithm = "ring";
  int64_t bucket_bytes = int64_t{1} << 20;
  bool nccl = false;
};

TrainingNets ReplicateForDevices(const TrainingNets& single,
                                 const std::vector<DeviceOption>& devices,
                                 const ProcessScaleOut& processes = {});

// "cpu_0/" for CPU device 0, "gpu_1/" for CUDA device 1 (Caffe2's name scopes), "sim_0/" for sim.
std::string DeviceScope(const DeviceOption& device);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_DATA_PARALLEL_H_
