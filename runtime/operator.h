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
// Thread safety: an op instance is run by one thread at a time (the executor's guarantee).
#ifndef BRAID_RUNTIME_OPERATOR_H_
#define BRAID_RUNTIME_OPERATOR_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/argument.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

namespace braid {

class Workspace;

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
  const Tensor& Input(int i) const { return *inputs_.at(i); }
  Tensor* Output(int i) { return outputs_.at(i); }
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
  int net_position_ = -1;  // first: shares the vtable pointer's cache line
  OperatorDef def_;
  Device device_;
  ArgumentReader args_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
  uint64_t seed_;
  std::unique_ptr<std::mt19937_64> rng_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_OPERATOR_H_
