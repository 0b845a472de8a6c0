// Checks a NetDef before it is built: the errors users see for malformed nets.
//
// ValidateNet throws braid::Error naming the net, the op (index, type, name) and the blob for:
// a net argument that is unknown, of another kind or out of range (runtime/exec/net_args.h), an op
// argument of another kind than its schema declares (OpSchema::VerifyArgs, naming the argument and
// what was expected) or one it does not declare that is a misspelling, changes results or, with
// strict_args: 1, any (otherwise ignored: glog warns once per op type and argument name, except
// for Caffe2's engine hints), an unknown op type (with the closest known types), wrong
// input/output counts, in-place use the schema forbids (or a missing one it enforces), a device
// without a kernel for the op, an input or control input that neither exists in the workspace,
// nor is a declared external_input, nor is produced by an earlier op, an external output that
// nothing produces, and an op reading plain only (outside its schema's BlockedPortsOf) a blob the
// net may hold blocked (runtime/core/tensor.h: named by an op's blocked_outputs, or written by an
// elementwise op reading such a blob). The last is checked here, once, rather than on every run: an
// op running in place would reset the layout by writing before it reads, so Tensor::data() could
// not catch it.
//
// Thread safety: ValidateNet may run on several threads at once. It reads the op schemas (read-only
// after static initialisation), looks blobs up in the workspace (runtime/core/workspace.h locks
// its lookups) and reads their storage and device, which are not synchronised: no other thread may
// change the storage or device of a blob the net names meanwhile. Its warn-once set is locked.
#ifndef BRAID_RUNTIME_EXEC_NET_VALIDATION_H_
#define BRAID_RUNTIME_EXEC_NET_VALIDATION_H_

#include <string>

#include "proto/braid.pb.h"

namespace braid {

class Workspace;

void ValidateNet(const NetDef& net, const Workspace& ws);
// The net with its device_option copied into every op that has none (Caffe2's rule).
NetDef WithNetDeviceOption(const NetDef& net);

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_NET_VALIDATION_H_
