// ModelBuilder: appends layers to a model's nets with Caffe2's op names and arguments, in the
// manner of Caffe2's brew and model_helper.
//
// A model is a set of parameters, created once by an init net (ModelParams), and nets that read
// them. Each layer function appends its ops to one net and creates its parameters in the init net
// with the fill Caffe2 uses (MSRAFill for conv weights, XavierFill for FC weights, ConstantFill for
// biases and batch-norm state). A parameter that already exists is reused when its shape agrees,
// so a train net and a test net built from the same layer calls share every parameter by name:
//
//   ModelParams params;
//   NetDef train, test;
//   ModelBuilder tb(&params, &train, {});
//   std::string y = tb.Relu(tb.SpatialBN(tb.Conv("data", "conv1", 1, 16, 3, 1, 1), "bn1", 16),
//   "r1"); ModelBuilder eb(&params, &test, {.is_test = true, .blob_prefix = "test/"});
//   eb.Relu(eb.SpatialBN(eb.Conv("test/data", "conv1", 1, 16, 3, 1, 1), "bn1", 16), "r1");
//   // params.init_net fills conv1_w, bn1_s, bn1_b, bn1_rm, bn1_riv once; test reads "test/data"
//   // and writes "test/conv1", "test/bn1", "test/r1".
//
// Layer functions take the input blob's full name and the layer's base name, and return the name
// of the blob they wrote: blob_prefix + base name for activations, base name + Caffe2's suffix
// (_w, _b, _s, _rm, _riv) for parameters, which never carry the prefix. Layers write new blobs,
// except ReluInPlace and SumInPlace, which overwrite their (first) input as Caffe2's ResNet
// builder does (no gradient op reads the blobs they overwrite). Invalid arguments (a parameter
// re-created with another shape) throw braid::Error.
//
// Thread safety: none; a builder and its ModelParams are used by one thread.
#ifndef BRAID_RUNTIME_MODELS_MODEL_BUILDER_H_
#define BRAID_RUNTIME_MODELS_MODEL_BUILDER_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/argument.h"  // AddIntArg and the other argument writers

namespace braid {

enum class ParamKind {
  kWeight,  // trained, with weight decay (conv and FC weights)
  kBias,    // trained, no weight decay (biases, batch-norm scale and bias)
  kState,   // not trained: state the forward pass updates (batch-norm running statistics)
};

struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  ParamKind kind = ParamKind::kWeight;

  bool trainable() const { return kind != ParamKind::kState; }
  bool weight_decay() const { return kind == ParamKind::kWeight; }
  int64_t numel() const;
};

// Parameters of a model and the init net that creates them, in creation order.
struct ModelParams {
  NetDef init_net;
  std::vector<ParamInfo> params;

  const ParamInfo* Find(const std::string& name) const;
  // Elements of the trainable parameters (what papers call a model's parameter count).
  int64_t TrainableCount() const;
};

class ModelBuilder {
 public:
  struct Options {
    bool is_test = false;       // batch norm uses running statistics (SpatialBN is_test=1)
    std::string blob_prefix{};  // prepended to every activation blob this builder names
    DeviceOption device{};      // copied into every op
    float bn_epsilon = 1e-5f;
    float bn_momentum = 0.9f;  // running = momentum * running + (1 - momentum) * batch
  };

  // `params` and `net` must outlive the builder.
  ModelBuilder(ModelParams* params, NetDef* net, Options options);

  // Conv with a [dim_out, dim_in, kernel, kernel] MSRAFill filter `name`_w (and a zero bias
  // `name`_b when `bias`).
  std::string Conv(const std::string& in, const std::string& name, int64_t dim_in, int64_t dim_out,
                   int kernel, int stride, int pad, bool bias = false);
  // SpatialBN with scale `name`_s (ConstantFill `scale_init`), bias `name`_b, running mean
  // `name`_rm and running variance `name`_riv. Training also writes the running statistics in
  // place and the saved mean and inverse std `name`_sm, `name`_siv (activations).
  std::string SpatialBN(const std::string& in, const std::string& name, int64_t dim,
                        float scale_init = 1.f);
  std::string Relu(const std::string& in, const std::string& name);
  // Relu op `name` overwriting `blob` (Relu allows in place); returns `blob`.
  std::string ReluInPlace(const std::string& blob, const std::string& name);
  std::string MaxPool(const std::string& in, const std::string& name, int kernel, int stride,
                      int pad);
  // AveragePool with global_pooling: [N, C, H, W] -> [N, C, 1, 1].
  std::string GlobalAveragePool(const std::string& in, const std::string& name);
  // FC with an XavierFill [dim_out, dim_in] weight `name`_w and a zero bias `name`_b; the input is
  // flattened from axis 1.
  std::string FC(const std::string& in, const std::string& name, int64_t dim_in, int64_t dim_out);
  std::string Sum(const std::vector<std::string>& ins, const std::string& name);
  // Sum op `name` accumulating into ins[0] (Sum allows {0, 0} in place); returns ins[0].
  std::string SumInPlace(const std::vector<std::string>& ins, const std::string& name);

  // Appends any op; its device option is the builder's.
  OperatorDef* AddOp(const std::string& type, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs);
  // Creates (or reuses) parameter `name` in the init net: an op of `fill_type` with the `shape`
  // argument (and `value`, for ConstantFill). Returns the name.
  std::string AddParam(const std::string& name, const std::vector<int64_t>& shape, ParamKind kind,
                       const std::string& fill_type, float value = 0.f);

  // blob_prefix + name.
  std::string Blob(const std::string& name) const { return options_.blob_prefix + name; }
  const Options& options() const { return options_; }
  NetDef* net() { return net_; }
  ModelParams* params() { return params_; }

 private:
  ModelParams* params_;
  NetDef* net_;
  Options options_;
};

// Number of ops of `type` in `net`.
int CountOps(const NetDef& net, const std::string& type);
// The net in protobuf text format (what braid_run and LoadNetDef read).
std::string NetToText(const NetDef& net);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_MODEL_BUILDER_H_
