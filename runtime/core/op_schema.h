// OpSchema: declarative metadata of an op type, kept apart from its kernels.
//
// A schema states the op's arity, which input/output pairs may (or must) share a blob (in-place),
// how output shapes and types follow from the inputs, which tensors it takes in the blocked layout
// (runtime/core/tensor.h), where its blobs live (its device, the host, any device) and whether it
// runs on the host only, whether the op is a collective, whether it allocates lazily on its first
// run, the arguments it accepts (runtime/core/arg_spec.h), and a line of documentation. Kernels
// queued on an asynchronous device (runtime/device/sim/sim_device.h) get their outputs sized on the
// host from the shape inference, before they run. Building a net checks every op against its schema
// before anything runs (Verify), and the memory planner reads in-place rules and shapes from here.
//
//   BRAID_OPERATOR_SCHEMA(Relu)
//       .NumInputs(1).NumOutputs(1)
//       .AllowInplace({{0, 0}})
//       .IdenticalTypeAndShape()
//       .NoArgs()
//       .SetDoc("Y = max(X, 0), elementwise.");
//
// Thread safety: schemas are registered during static initialisation and read-only afterwards.
#ifndef BRAID_RUNTIME_CORE_OP_SCHEMA_H_
#define BRAID_RUNTIME_CORE_OP_SCHEMA_H_

#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "braid/dtype.h"
#include "proto/braid.pb.h"
#include "runtime/core/arg_spec.h"
#include "runtime/core/device.h"

namespace braid {

// A blob's type and shape, as far as shape inference knows it.
struct ShapeInfo {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> dims;
  bool known = false;

  // Throws braid::Error for a count that overflows int64 (runtime/core/element_count.h).
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype); }
};

// Where an op's blobs live: on the op's device (its device_option), in host memory, or on any
// device (the kernel reaches them itself: copies between devices, collectives).
enum class BlobPlace : uint8_t { kOpDevice, kHost, kAnyDevice };

// The argument naming the outputs an op writes in a blocked layout (ints; output indices).
inline constexpr char kBlockedOutputsArg[] = "blocked_outputs";
// The channels per block of those outputs (int: 8 or 16, runtime/core/tensor.h; 16 when absent).
inline constexpr char kChannelBlockArg[] = "channel_block";
// The argument seeding an op's random stream (int; planner/op_seed.h).
inline constexpr char kSeedArg[] = "seed";
// The arguments every op accepts, which the runtime reads: kBlockedOutputsArg, kChannelBlockArg,
// kSeedArg.
const std::vector<ArgSpec>& CommonOpArgs();

class Tensor;  // runtime/core/tensor.h

class OpSchema {
 public:
  // The inputs an op reads in either layout and the outputs it can write blocked, and the channel
  // block its kernels work on (8 or 16: the machine's, as oneDNN's convolutions choose it; 0: any,
  // for elementwise ops, or no blocked layout at all on this machine).
  struct LayoutPorts {
    std::vector<int> inputs, outputs;
    int64_t channel_block = 0;
  };
  // Output shapes from the op and its input shapes; may throw braid::Error for inconsistent
  // shapes. Outputs it cannot infer are returned with known = false.
  using ShapeFunction =
      std::function<std::vector<ShapeInfo>(const OperatorDef&, const std::vector<ShapeInfo>&)>;
  static constexpr int kUnbounded = std::numeric_limits<int>::max();

  explicit OpSchema(std::string type) : type_(std::move(type)) {}

  OpSchema& NumInputs(int n) { return NumInputs(n, n); }
  OpSchema& NumInputs(int min, int max);
  OpSchema& NumOutputs(int n) { return NumOutputs(n, n); }
  OpSchema& NumOutputs(int min, int max);
  // Pairs (input index, output index) that may name the same blob.
  OpSchema& AllowInplace(std::set<std::pair<int, int>> pairs);
  // Pairs that must name the same blob (implies allowed).
  OpSchema& EnforceInplace(std::set<std::pair<int, int>> pairs);
  OpSchema& TensorInference(ShapeFunction fn);
  // Output i has input i's type and shape (input 0's for outputs beyond the inputs).
  OpSchema& IdenticalTypeAndShape();
  // Layouts (runtime/core/tensor.h). The op reads these inputs in either layout and writes these
  // outputs blocked when its kBlockedOutputsArg lists them; its other inputs must be plain
  // (runtime/exec/net_validation.h checks a net for it).
  OpSchema& BlockedPorts(std::function<LayoutPorts(const OperatorDef&)> ports);
  // Elementwise ops: every input in either layout (all alike), every output in the inputs' layout.
  OpSchema& LayoutFollowsInputs();
  // Input `index` may be a parameter packed once, when an inference net is loaded, into a layout
  // the op reads without a reorder (runtime/models/pack_parameters.h): `pack` rewrites the tensor
  // in place and returns true, or leaves it as it is and returns false. The op reads it in either
  // layout.
  using PackFunction = std::function<bool(const OperatorDef& op, Tensor* tensor)>;
  OpSchema& PackedInput(int index, PackFunction pack);
  // Where the op's inputs / outputs live (default kOpDevice); checked when a net is built
  // (runtime/exec/net_validation.h) and when a kernel touches a tensor (OperatorBase::Input).
  OpSchema& InputsOn(BlobPlace place);
  OpSchema& OutputsOn(BlobPlace place);
  // The op runs on the host only (readers, file I/O): it has no kernel on any other device.
  OpSchema& HostOnly();
  // The op communicates with other devices or processes (all-reduce, broadcast...).
  OpSchema& Collective();
  // A Collective whose peers are other processes (Gloo): a `dag` net runs these ops one at a time,
  // in net order, so that ranks never wait in different ones
  // (runtime/exec/process_collective_order.h).
  OpSchema& WaitsForOtherProcesses();
  // The op allocates on its first run (workspaces, handles); the first run then goes
  // single-threaded.
  OpSchema& AllocatesLazily();
  // Arguments (runtime/core/arg_spec.h), checked when a net is built (VerifyArgs): an argument of
  // another kind is an error; one the op does not declare is one in a strict net (net argument
  // strict_args) and otherwise ignored as Caffe2 ignores it, with a warning, unless it is a
  // misspelling or changes results (runtime/core/arg_spec.h CheckArguments). Every schema says what
  // it takes: Arg, Args or ArgsOf declare names (beside CommonOpArgs), NoArgs none, AnyArgs any
  // name (an op with open-ended arguments; the declared ones are still checked). One that says
  // nothing accepts CommonOpArgs only (tests/ops/op_arguments_test.cc requires every schema to
  // say).
  OpSchema& Arg(std::string name, ArgKind kinds);
  OpSchema& Args(const std::vector<ArgSpec>& specs);
  // The arguments op `type` accepts (a gradient op, made with its forward op's arguments).
  OpSchema& ArgsOf(std::string type);
  OpSchema& NoArgs();
  OpSchema& AnyArgs();
  OpSchema& SetDoc(std::string doc);

  const std::string& type() const { return type_; }
  int min_inputs() const { return min_inputs_; }
  int max_inputs() const { return max_inputs_; }
  int min_outputs() const { return min_outputs_; }
  int max_outputs() const { return max_outputs_; }
  bool inplace_allowed(int input, int output) const;
  bool inplace_enforced(int input, int output) const;
  const std::set<std::pair<int, int>>& allowed_inplace() const { return allowed_inplace_; }
  const std::set<std::pair<int, int>>& enforced_inplace() const { return enforced_inplace_; }
  // The op's ports: BlockedPorts', or all inputs and outputs if LayoutFollowsInputs, else none.
  LayoutPorts BlockedPortsOf(const OperatorDef& op) const;
  bool layout_follows_inputs() const { return layout_follows_inputs_; }
  // PackedInput's function for input `index`; null when it has none.
  const PackFunction* packed_input(int index) const;
  BlobPlace input_place() const { return input_place_; }
  BlobPlace output_place() const { return output_place_; }
  bool host_only() const { return host_only_; }
  bool has_shape_inference() const { return static_cast<bool>(shape_fn_); }
  bool is_collective() const { return collective_; }
  bool waits_for_other_processes() const { return waits_for_other_processes_; }
  bool allocates_lazily() const { return allocates_lazily_; }
  const std::string& doc() const { return doc_; }
  bool args_declared() const { return args_declared_; }
  const std::vector<ArgSpec>& args() const { return args_; }
  const std::string& args_of() const { return args_of_; }
  // What the op accepts: its own arguments, ArgsOf's (transitively) and CommonOpArgs.
  AcceptedArgs accepted_args() const;

  // Empty if `op` satisfies arity, in-place and layout rules, else what is wrong.
  std::string Verify(const OperatorDef& op) const;
  // Empty if `op`'s arguments are accepted (see Arg), else what is wrong. With `unknown`, names
  // the op does not accept are listed there instead of being an error.
  std::string VerifyArgs(const OperatorDef& op, std::vector<std::string>* unknown = nullptr) const;
  // Output shapes (unknown ones when the schema has no inference function). Throws braid::Error
  // naming the output when an inferred shape's element count or byte size overflows int64.
  std::vector<ShapeInfo> InferShapes(const OperatorDef& op, const std::vector<ShapeInfo>& in) const;

 private:
  std::string type_;
  int min_inputs_ = 0, max_inputs_ = kUnbounded;
  int min_outputs_ = 0, max_outputs_ = kUnbounded;
  std::set<std::pair<int, int>> allowed_inplace_, enforced_inplace_;
  ShapeFunction shape_fn_;
  std::function<LayoutPorts(const OperatorDef&)> blocked_ports_;
  bool layout_follows_inputs_ = false;
  std::map<int, PackFunction> packed_inputs_;
  BlobPlace input_place_ = BlobPlace::kOpDevice;
  BlobPlace output_place_ = BlobPlace::kOpDevice;
  bool host_only_ = false;
  bool collective_ = false;
  bool waits_for_other_processes_ = false;
  bool allocates_lazily_ = false;
  bool args_declared_ = false;
  bool any_args_ = false;
  std::vector<ArgSpec> args_;
  std::string args_of_;
  std::string doc_;
};

// The schema of an op type, or null.
const OpSchema* FindSchema(const std::string& type);
// Every registered op type, sorted.
std::vector<std::string> RegisteredOpTypes();
// Registered op types sorted by edit distance to `type` (at most `n`).
std::vector<std::string> ClosestOpTypes(const std::string& type, size_t n = 3);
// Whether a kernel of an op on `op_device` may touch a blob on `blob_device` at `place`.
bool PlaceReaches(BlobPlace place, const Device& op_device, const Device& blob_device);
// The device a blob at `place` of an op on `op_device` is made on (kAnyDevice: none, returns
// false).
bool DeviceAtPlace(BlobPlace place, const Device& op_device, Device* device);

// Registers a schema; a second registration of one type is a CHECK failure.
OpSchema& RegisterSchema(const std::string& type);

#define BRAID_SCHEMA_CONCAT_(a, b) a##b
#define BRAID_SCHEMA_NAME_(type, line) BRAID_SCHEMA_CONCAT_(braid_schema_##type##_, line)
#define BRAID_OPERATOR_SCHEMA(type) \
  [[maybe_unused]] static ::braid::OpSchema& BRAID_SCHEMA_NAME_(type, __LINE__) = \
      ::braid::RegisterSchema(#type)

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_OP_SCHEMA_H_
