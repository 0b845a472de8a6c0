#include "runtime/random_net.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace braid::testing {
namespace {

class Builder {
 public:
  Builder(uint64_t seed, const RandomNetOptions& options) : rng_(seed), options_(options) {
    net_.set_name("random_" + std::to_string(seed));
  }

  NetDef Build() {
    for (int i = 0; i < options_.num_inputs; ++i) AddFill();
    for (int i = 0; i < options_.num_ops; ++i) AddRandomOp();
    for (const std::string& b : blobs_) net_.add_external_output(b);
    return net_;
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  const std::string& AnyBlob() { return blobs_[Uniform(0, static_cast<int>(blobs_.size()) - 1)]; }

  // A fresh blob most of the time; otherwise overwrite an existing one that `op` does not read.
  std::string OutputBlob(const OperatorDef& op) {
    if (Uniform(0, 3) == 0) {
      const std::string& victim = AnyBlob();
      if (std::find(op.input().begin(), op.input().end(), victim) == op.input().end()) return victim;
    }
    blobs_.push_back("b" + std::to_string(blobs_.size()));
    return blobs_.back();
  }

  OperatorDef* AddOp(const std::string& type) {
    OperatorDef* op = net_.add_op();
    op->set_type(type);
    op->set_name(type + "_" + std::to_string(net_.op_size() - 1));
    return op;
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
    blobs_.push_back("b" + std::to_string(blobs_.size()));
    op->add_output(blobs_.back());
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

}  // namespace braid::testing
