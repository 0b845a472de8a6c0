#include "tools/stress/random_net.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/device.h"

namespace braid {
namespace {

class Builder {
 public:
  Builder(uint64_t seed, const RandomNetOptions& options) : rng_(seed), options_(options) {
    net_.set_name("random_" + std::to_string(seed));
    for (int d = 0; d < std::max(options.num_devices, 1); ++d) {
      devices_.push_back(Device{DeviceType::kCpu, d});
    }
    for (int d = 0; d < options.num_sim_devices; ++d) {
      devices_.push_back(Device{DeviceType::kSim, d});
    }
  }

  NetDef Build() {
    for (int i = 0; i < options_.num_inputs; ++i) AddFill();
    for (int i = 0; i < options_.num_ops; ++i) {
      if (options_.concat_split && Uniform(0, 7) == 0) {
        AddConcatSplit();
      } else {
        AddRandomOp();
      }
    }
    const size_t first_output =
        options_.all_outputs ? 0 : blobs_.size() - std::min<size_t>(blobs_.size(), 3);
    for (size_t b = first_output; b < blobs_.size(); ++b) net_.add_external_output(blobs_[b]);
    return net_;
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  const std::string& AnyBlob() { return blobs_[Uniform(0, static_cast<int>(blobs_.size()) - 1)]; }
  Device AnyDevice() {
    return devices_.size() == 1 ? devices_[0]
                                : devices_[Uniform(0, static_cast<int>(devices_.size()) - 1)];
  }

  // A fresh blob on `device` most of the time; otherwise overwrite an existing one there that `op`
  // does not read.
  std::string OutputBlob(const OperatorDef& op, const Device& device) {
    if (Uniform(0, 3) == 0) {
      const std::string& victim = AnyBlob();
      if (std::find(op.input().begin(), op.input().end(), victim) == op.input().end() &&
          SameMemory(device, home_[victim]))
        return victim;
    }
    return FreshBlob(device);
  }

  // An op on `device` (the net's only device when there is one).
  OperatorDef* AddOp(const std::string& type, const Device& device) {
    OperatorDef* op = net_.add_op();
    op->set_type(type);
    op->set_name(type + "_" + std::to_string(net_.op_size() - 1));
    if (devices_.size() > 1) *op->mutable_device_option() = DeviceToProto(device);
    return op;
  }

  std::string FreshBlob(const Device& device) {
    blobs_.push_back("b" + std::to_string(blobs_.size()));
    home_[blobs_.back()] = device;
    return blobs_.back();
  }

  // `blob` as an op on `device` may read it: itself, or a copy made there now.
  std::string Reachable(const std::string& blob, const Device& device) {
    const Device from = home_[blob];
    if (SameMemory(device, from)) return blob;
    const char* type = from.is_host() ? "CopyCPUToGPU" : device.is_host() ? "CopyGPUToCPU" : "Copy";
    OperatorDef* copy = AddOp(type, device.is_host() ? from : device);
    copy->add_input(blob);
    copy->add_output(FreshBlob(device));
    return copy->output(0);
  }

  // Concat(x, y) along axis 0 into a double-size blob, then Split it back into two fresh blobs.
  void AddConcatSplit() {
    const Device device = AnyDevice();
    const std::string x = Reachable(AnyBlob(), device), y = Reachable(AnyBlob(), device);
    OperatorDef* concat = AddOp("Concat", device);
    concat->add_input(x);
    concat->add_input(y);
    Argument* axis = concat->add_arg();
    axis->set_name("axis");
    axis->set_i(0);
    const std::string whole = "cat" + std::to_string(net_.op_size() - 1);
    concat->add_output(whole);
    concat->add_output(whole + "_info");
    home_[whole] = home_[whole + "_info"] = device;
    OperatorDef* split = AddOp("Split", device);
    split->add_input(whole);
    Argument* split_axis = split->add_arg();
    split_axis->set_name("axis");
    split_axis->set_i(0);
    split->add_output(FreshBlob(device));
    split->add_output(FreshBlob(device));
  }

  void AddFill() {
    const Device device = AnyDevice();
    OperatorDef* op = AddOp("UniformFill", device);
    Argument* shape = op->add_arg();
    shape->set_name("shape");
    shape->add_ints(options_.blob_size);
    auto add_float = [&](const char* name, float v) {
      Argument* a = op->add_arg();
      a->set_name(name);
      a->set_f(v);
    };
    add_float("min", -1.f);
    add_float("max", 1.f);
    Argument* seed = op->add_arg();
    seed->set_name("seed");
    seed->set_i(Uniform(0, 1 << 30));
    op->add_output(FreshBlob(device));
  }

  void AddRandomOp() {
    static const char* kTypes[] = {"Sum", "Add", "Mul", "Relu", "Copy", "Relu", "Sum"};
    const int kind = Uniform(0, 6);
    int arity = kind == 0 ? Uniform(1, 3) : (kind == 1 || kind == 2 || kind == 6) ? 2 : 1;
    // Relu (kind 5) and Sum (kind 6) run in place on their first input, which no other input
    // names; they run where that input lives.
    bool in_place = kind == 5 || kind == 6;
    std::vector<std::string> picked;
    for (int i = 0; i < arity; ++i) {
      std::string in = AnyBlob();
      while (in_place && i > 0 && in == picked[0] && blobs_.size() > 1) in = AnyBlob();
      picked.push_back(in);
    }
    const Device device = in_place ? home_[picked[0]] : AnyDevice();
    std::vector<std::string> inputs;
    for (size_t i = 0; i < picked.size(); ++i) {
      // A Copy reads from any device itself; the in-place input lives where the op runs.
      inputs.push_back(kind == 4 || (in_place && i == 0) ? picked[i] : Reachable(picked[i], device));
    }
    OperatorDef* op = AddOp(kTypes[kind], device);
    for (const std::string& in : inputs) op->add_input(in);
    // Control inputs name blobs that exist before this op (never its own fresh output).
    if (Uniform(0, 7) == 0) op->add_control_input(AnyBlob());
    op->add_output(in_place ? op->input(0) : OutputBlob(*op, device));
  }

  std::mt19937_64 rng_;
  RandomNetOptions options_;
  NetDef net_;
  std::vector<std::string> blobs_;
  std::vector<Device> devices_;
  std::map<std::string, Device> home_;  // the device each blob lives on
};

}  // namespace

NetDef RandomNet(uint64_t seed, const RandomNetOptions& options) {
  return Builder(seed, options).Build();
}

}  // namespace braid
