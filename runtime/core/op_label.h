// How errors name an op of a net: "net 'name' op #i (Type 'op_name')". Every message about an op
// (validation, shape inference, autodiff, a kernel's failure) starts with this label, so users
// can find the op however the error reached them.
//
// Thread safety: a pure function of its arguments.
#ifndef BRAID_RUNTIME_CORE_OP_LABEL_H_
#define BRAID_RUNTIME_CORE_OP_LABEL_H_

#include <string>

#include "proto/braid.pb.h"

namespace braid {

// "net 'name' op #i (Type 'op_name')"; `i` must index an op of `net`.
std::string OpLabelOf(const NetDef& net, int i);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_OP_LABEL_H_
