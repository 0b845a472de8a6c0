// Automatic differentiation: appends the backward pass of a net to it (Caffe2's
// AddGradientOperators), building each op's gradient ops with its registered GradientMaker
// (runtime/core/gradient.h).
//
// For each loss L it appends ConstantFill(L, value=1.0) -> "L_grad" (ConstantFill with an input
// takes its shape), then walks the forward ops in reverse. Blobs are tracked by version: every op
// output makes a new version of its blob, so an in-place Relu X -> X reads one version of X and
// writes the next. The gradient of a version is the sum of what the ops that read that version
// contribute: a single contribution is written directly to "X_grad"; several are written to
// "X_grad_autosplit_<k>" and summed by one Sum op into "X_grad". Every version of X has its
// gradient in "X_grad" (the backward pass overwrites it from the last version to the first), so an
// in-place forward op gets an in-place gradient op (ReluGradient dX -> dY) where the gradient op's
// schema allows it; where it does not, the contribution goes to "X_grad_autosplit_<k>" and a
// one-input Sum writes "X_grad".
//
// The gradient stops at ops that get no output gradient, at ops without inputs (data readers,
// fills) and at op types registered with BRAID_NO_GRADIENT. It throws braid::Error naming the op
// (index, type, name) when an op that receives an output gradient has inputs but no maker, when a
// gradient op would read a blob that a later forward op overwrote (e.g. Mul written in place of an
// input its gradient needs), when a loss is not written by any op, and when a gradient name is
// already a blob of the net.
//
//   NetDef net = ...;   // FC -> Relu -> FC -> loss
//   GradientMap grads = AddGradientOperators(&net, {"loss"});
//   grads.at("fc1_w");  // "fc1_w_grad": what the optimizer reads
//
// Pure function of the NetDef and the registries; thread-safe.
#ifndef BRAID_RUNTIME_CORE_AUTODIFF_H_
#define BRAID_RUNTIME_CORE_AUTODIFF_H_

#include <map>
#include <string>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

// Blob name -> the name of its gradient blob, for every blob that got a gradient (parameters,
// activations and the losses themselves). After the backward pass runs, the gradient blob holds
// the gradient of the earliest version of the blob that got one (for a parameter: its only one).
using GradientMap = std::map<std::string, std::string>;

GradientMap AddGradientOperators(NetDef* net, const std::vector<std::string>& losses);

// Reads the names back (for nets built elsewhere too, as Caffe2's gradient blobs are named alike):
// true when `blob` is a gradient name (it contains "_grad": "w_grad", "r_grad_autosplit_0"), with
// *of the blob it is the gradient of ("w"), or "" for a part summed into another. The memory
// planner gets these as data (PlanRequest::gradients).
bool GradientNameOf(const std::string& blob, std::string* of);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_AUTODIFF_H_
