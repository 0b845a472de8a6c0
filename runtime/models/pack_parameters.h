// PackParameters: stores an inference net's constant parameters once in the layouts its ops read
// without a reorder (OpSchema::PackedInput), where the ops would otherwise reorder them on every
// run: Conv's filters in oneDNN's blocked order (Layout::kFilterBlocked16 on AVX-512,
// kFilterBlocked8 on AVX2, runtime/core/tensor.h).
// ResNet-50 at batch 1 reorders its 94 MB of filters on every run unpacked.
//
// A blob of `parameters` is packed when
//   - every op of `net` that reads it is of one type and reads it only at a PackedInput position
//     of that type's schema (an op reading it anywhere else, or ops of two types, keep it plain);
//   - no op of `net` writes it and it is not one of the net's external outputs;
//   - `workspace` holds it, and the schema's pack function (given the first reader) accepts it.
// A packed tensor refuses Tensor::data() (it is not plain), so pack only parameters nothing but
// the net reads: a Predictor's, or a benchmark's. Packing is in place (no second copy) and exact
// (a reorder of the same floats).
//
//   Workspace parameters;
//   Status s = RunInitNet(init_net, &parameters);  // the init net's blobs alone
//   const std::vector<std::string> names = parameters.LocalBlobNames();
//   PackParameters(predict_net, {names.begin(), names.end()}, &parameters);
//
// Returns the names of the blobs packed. Throws braid::Error from a pack function.
// Thread safety: nothing may run on `workspace` meanwhile.
#ifndef BRAID_RUNTIME_MODELS_PACK_PARAMETERS_H_
#define BRAID_RUNTIME_MODELS_PACK_PARAMETERS_H_

#include <set>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/workspace.h"

namespace braid {

std::vector<std::string> PackParameters(const NetDef& net, const std::set<std::string>& parameters,
                                        Workspace* workspace);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_PACK_PARAMETERS_H_
