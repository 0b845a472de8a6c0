// OperatorBase: one op of a net, bound to its input and output tensors.
//
// An op is created from its OperatorDef when its net is built: the constructor resolves every input
// and output blob in the workspace once, so Run touches only those tensors. Run does the work and
// throws braid::Error (or any std::exception) on failure; the executor catches it at the op and
// reports the net, op index, type and name with the cause.
//
//   class ReluOp final : public OperatorBase {
//    public:
//     using OperatorBase::OperatorBase;
//     void Run() override { ... Input(0) ... Output(0)->mutable_data<float>() ... }
//   };
//   BRAID_REGISTER_CPU_OPERATOR(Relu, ReluOp);   // last line of ops/math/relu_op.cc
//
// Devices: an op runs on the device of its device_option. Input(i) and Output(i) refuse a tensor
// its kernel may not touch (on another device than the op's schema places it,
// runtime/core/op_schema.h BlobPlace), naming the blob and both devices: "blob 'fc1_w' is on sim:1;
// copy it to cpu:0 first". Outputs without storage are made on the device the schema places them.
//
// Thread safety: an op instance is run by one thread at a time (the executor's guarantee).
#ifndef BRAID_RUNTIME_CORE_OPERATOR_H_
#define BRAID_RUNTIME_CORE_OPERATOR_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/argument.h"
#include "runtime/core/device.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/tensor.h"

namespace braid {

class Workspace;

// The layout `op` is to write output `output` in: blocked by its kChannelBlockArg (16 when absent)
// when its kBlockedOutputsArg lists the output (runtime/core/op_schema.h), else plain.
Layout RequestedLayout(const OperatorDef& op, int output);

class OperatorBase {
 public:
  OperatorBase(const OperatorDef& def, Workspace* ws);
  virtual ~OperatorBase() = default;
  OperatorBase(const OperatorBase&) = delete;
  OperatorBase& operator=(const OperatorBase&) = delete;

  virtual void Run() = 0;

  const OperatorDef& def() const { return def_; }
  const std::string& type() const { return def_.type(); }
  const Device& device() const { return device_; }
  int InputSize() const { return static_cast<int>(inputs_.size()); }
  int OutputSize() const { return static_cast<int>(outputs_.size()); }
  const Tensor& Input(int i) const {
    const Tensor* t = inputs_.at(i);
    if (!SameMemory(device_, t->device())) CheckPlace(*t, input_place_, def_.input(i));
    return *t;
  }
  Tensor* Output(int i) {
    Tensor* t = outputs_.at(i);
    if (!SameMemory(device_, t->device())) CheckPlace(*t, output_place_, def_.output(i));
    return t;
  }
  // An output with its type and shape set (capacity grows on the first mutable_data).
  Tensor* Output(int i, DType dtype, std::vector<int64_t> shape);
  const ArgumentReader& args() const { return args_; }
  // The op's index in its net's NetDef.op (set by the net that owns it; -1 outside a net).
  int net_position() const { return net_position_; }
  void set_net_position(int position) { net_position_ = position; }

  // The op's random stream, seeded by OpSeed (planner/op_seed.h): its `seed` argument, its device
  // option's random_seed, or a hash of its first output name: reproducible whatever the schedule.
  // Made on first use, so ops that draw no random numbers stay small (a generator is 2.5 KB).
  std::mt19937_64& rng();

 private:
  // Throws braid::Error unless a blob on t's device may be at `place` of this op.
  void CheckPlace(const Tensor& t, BlobPlace place, const std::string& blob) const;

  int net_position_ = -1;  // first: shares the vtable pointer's cache line
  OperatorDef def_;
  Device device_;
  ArgumentReader args_;
  BlobPlace input_place_ = BlobPlace::kOpDevice;
  BlobPlace output_place_ = BlobPlace::kOpDevice;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
  uint64_t seed_;
  std::unique_ptr<std::mt19937_64> rng_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_OPERATOR_H_
