#include "runtime/models/fold_batch_norm.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "runtime/core/argument.h"
#include "runtime/core/fused_activation.h"
#include "runtime/core/tensor.h"
#include "runtime/models/blob_uses.h"

namespace braid {
namespace {

bool Nchw(const OperatorDef& op) {
  return ArgumentReader(op.arg()).Get<std::string>("order", "NCHW") == "NCHW";
}

// What a fold needs: the two ops and their parameters' tensors.
struct Fold {
  int conv = -1, bn = -1;
  Tensor* filter = nullptr;
  Tensor* conv_bias = nullptr;  // null: the Conv has none, and takes `bn_bias`'s blob
  const Tensor* scale = nullptr;
  const Tensor* mean = nullptr;
  const Tensor* var = nullptr;
  Tensor* bn_bias = nullptr;
};

class Folder {
 public:
  Folder(NetDef* net, const std::set<std::string>& parameters, Workspace* workspace)
      : net_(net), parameters_(parameters), workspace_(workspace), uses_(UsesOf(*net)) {}

  // The fold of SpatialBN op `bn` into the Conv writing its input, when every condition of the
  // header holds; else conv = -1.
  Fold Find(int bn) const {
    Fold fold;
    const OperatorDef& norm = net_->op(bn);
    if (norm.type() != "SpatialBN" || norm.input_size() != 5 || norm.output_size() != 1 ||
        !ArgumentReader(norm.arg()).Get<bool>("is_test", false) || !Nchw(norm)) {
      return fold;
    }
    const int conv = AbsorbingProducer(*net_, uses_, bn);
    if (conv < 0) return fold;
    const OperatorDef& op = net_->op(conv);
    if (op.type() != "Conv" || op.input_size() < 2 || !Nchw(op) ||
        HasFusedEpilogue(op)) {  // a sum or an activation before the BN
      return fold;
    }
    fold.filter = Parameter(op.input(1), conv);
    if (fold.filter == nullptr || fold.filter->shape().size() != 4) return fold;
    const int64_t m = fold.filter->shape()[0];
    if (op.input_size() > 2) {
      fold.conv_bias = Parameter(op.input(2), conv);
      if (fold.conv_bias == nullptr || fold.conv_bias->shape() != std::vector<int64_t>{m}) {
        return fold;
      }
    }
    fold.scale = Constant(norm.input(1), m);
    fold.mean = Constant(norm.input(3), m);
    fold.var = Constant(norm.input(4), m);
    fold.bn_bias = Parameter(norm.input(2), bn);
    if (fold.scale == nullptr || fold.mean == nullptr || fold.var == nullptr ||
        fold.bn_bias == nullptr || fold.bn_bias->shape() != std::vector<int64_t>{m}) {
      return fold;
    }
    fold.conv = conv;
    fold.bn = bn;
    return fold;
  }

  // Rewrites the parameters and the net, and takes the net's uses anew.
  void Apply(const Fold& fold) {
    const OperatorDef& norm = net_->op(fold.bn);
    const double epsilon = ArgumentReader(norm.arg()).Get<float>("epsilon", 1e-5f);
    const int64_t m = fold.filter->shape()[0];
    const int64_t per_filter = fold.filter->numel() / std::max<int64_t>(m, 1);
    float* w = fold.filter->mutable_data<float>();
    const float* scale = fold.scale->data<float>();
    const float* mean = fold.mean->data<float>();
    const float* var = fold.var->data<float>();
    const float* conv_b = fold.conv_bias != nullptr ? fold.conv_bias->data<float>() : nullptr;
    std::vector<float> bias(m);
    const float* beta = fold.bn_bias->data<float>();
    for (int64_t c = 0; c < m; ++c) {
      const double a = scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
      for (int64_t k = 0; k < per_filter; ++k) {
        w[c * per_filter + k] = static_cast<float>(w[c * per_filter + k] * a);
      }
      const double b = conv_b != nullptr ? conv_b[c] : 0.0;
      bias[c] = static_cast<float>((b - mean[c]) * a + beta[c]);
    }
    Tensor* bias_tensor = fold.conv_bias != nullptr ? fold.conv_bias : fold.bn_bias;
    std::copy(bias.begin(), bias.end(), bias_tensor->mutable_data<float>());

    OperatorDef* conv = net_->mutable_op(fold.conv);
    const std::string y = norm.output(0), bn_bias = norm.input(2);
    conv->set_output(0, y);
    if (fold.conv_bias == nullptr) conv->add_input(bn_bias);
    net_->mutable_op()->DeleteSubrange(fold.bn, 1);
    uses_ = UsesOf(*net_);
  }

 private:
  // A float32 plain host tensor of the parameters that only op `reader` reads and nothing writes
  // or fetches; null otherwise.
  Tensor* Parameter(const std::string& name, int reader) const {
    Tensor* t = Held(name);
    if (t == nullptr) return nullptr;
    const BlobUses& uses = uses_.at(name);
    return OnlyOp(uses.readers, reader) && uses.writers.empty() && !IsExternalOutput(*net_, name)
               ? t
               : nullptr;
  }

  // A float32 plain host tensor [m] of the parameters that nothing writes; null otherwise.
  const Tensor* Constant(const std::string& name, int64_t m) const {
    const Tensor* t = Held(name);
    if (t == nullptr || t->shape() != std::vector<int64_t>{m}) return nullptr;
    return uses_.at(name).writers.empty() ? t : nullptr;
  }

  Tensor* Held(const std::string& name) const {
    if (parameters_.count(name) == 0) return nullptr;
    Tensor* t = workspace_->GetBlob(name);
    if (t == nullptr || t->dtype() != DType::kFloat32 || t->layout() != Layout::kPlain ||
        !t->device().is_host()) {
      return nullptr;
    }
    return t;
  }

  NetDef* net_;
  const std::set<std::string>& parameters_;
  Workspace* workspace_;
  std::map<std::string, BlobUses> uses_;
};

}  // namespace

int FoldBatchNorm(NetDef* net, const std::set<std::string>& parameters, Workspace* workspace) {
  Folder folder(net, parameters, workspace);
  int folded = 0;
  for (int j = 0; j < net->op_size();) {
    const Fold fold = folder.Find(j);
    if (fold.conv < 0) {
      ++j;
      continue;
    }
    folder.Apply(fold);  // op j is gone: the next op is at j now
    ++folded;
  }
  return folded;
}

}  // namespace braid
