#include "tools/stress/random_net.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace braid {
namespace {

class Builder {
 public:
  Builder(uint64_t seed, const RandomNetOptions& options) : rng_(seed), options_(options) {
    net_.set_name("random_" + std::to_string(seed));
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

  // A fresh blob most of the time; otherwise overwrite an existing one that `op` does not read.
  std::string OutputBlob(const OperatorDef& op) {
    if (Uniform(0, 3) == 0) {
      const std::string& victim = AnyBlob();
      if (std::find(op.input().begin(), op.input().end(), victim) == op.input().end())
        return victim;
    }
    return FreshBlob();
  }

  OperatorDef* AddOp(const std::string& type) {
    OperatorDef* op = net_.add_op();
    op->set_type(type);
    op->set_name(type + "_" + std::to_string(net_.op_size() - 1));
    if (options_.num_devices > 1) {
      op->mutable_device_option()->set_device_id(Uniform(0, options_.num_devices - 1));
    }
    return op;
  }

  std::string FreshBlob() {
    blobs_.push_back("b" + std::to_string(blobs_.size()));
    return blobs_.back();
  }

  // Concat(x, y) along axis 0 into a double-size blob, then Split it back into two fresh blobs.
  void AddConcatSplit() {
    OperatorDef* concat = AddOp("Concat");
    concat->add_input(AnyBlob());
    concat->add_input(AnyBlob());
    Argument* axis = concat->add_arg();
    axis->set_name("axis");
    axis->set_i(0);
    const std::string whole = "cat" + std::to_string(net_.op_size() - 1);
    concat->add_output(whole);
    concat->add_output(whole + "_info");
    OperatorDef* split = AddOp("Split");
    split->add_input(whole);
    Argument* split_axis = split->add_arg();
    split_axis->set_name("axis");
    split_axis->set_i(0);
    split->add_output(FreshBlob());
    split->add_output(FreshBlob());
  }

  void AddFill() {
    OperatorDef* op = AddOp("UniformFill");
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
    op->add_output(FreshBlob());
  }

  void AddRandomOp() {
    static const char* kTypes[] = {"Sum", "Add", "Mul", "Relu", "Copy", "Relu", "Sum"};
    const int kind = Uniform(0, 6);
    OperatorDef* op = AddOp(kTypes[kind]);
    int arity = kind == 0 ? Uniform(1, 3) : (kind == 1 || kind == 2 || kind == 6) ? 2 : 1;
    // Relu (kind 5) and Sum (kind 6) run in place on their first input, which no other input names.
    bool in_place = kind == 5 || kind == 6;
    for (int i = 0; i < arity; ++i) {
      std::string in = AnyBlob();
      while (in_place && i > 0 && in == op->input(0) && blobs_.size() > 1) in = AnyBlob();
      op->add_input(in);
    }
    // Control inputs name blobs that exist before this op (never its own fresh output).
    if (Uniform(0, 7) == 0) op->add_control_input(AnyBlob());
    op->add_output(in_place ? op->input(0) : OutputBlob(*op));
  }

  std::mt19937_64 rng_;
  RandomNetOptions options_;
  NetDef net_;
  std::vector<std::string> blobs_;
};

}  // namespace

NetDef RandomNet(uint64_t seed, const RandomNetOptions& options) {
  return Builder(seed, options).Build();
}

}  // namespace braid
