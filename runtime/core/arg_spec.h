// ArgSpec: an argument an op or a net accepts (its name, the kinds of value it may hold and, for
// integers, the valid range), and the check of an Argument list against such declarations.
//
// Kinds follow the fields of braid.proto's Argument: i, f, s, ints, floats, strings. A float
// argument also accepts an integer value (i), as Caffe2's GetSingleArgument<float> and
// ArgumentReader::Get<float> do; no other kind converts (a list of floats given as ints would read
// as empty). A list argument with no value at all is an empty list of any kind. Bools are ints.
//
//   AcceptedArgs accepted;
//   accepted.groups = {&schema_args, &CommonOpArgs()};
//   std::string problem = CheckArguments(op.arg(), accepted);
//   // "argument 'kernels' must be a list of ints (ints), got a string (s) \"3\""
//
// Pure functions over immutable data; thread-safe.
#ifndef BRAID_RUNTIME_CORE_ARG_SPEC_H_
#define BRAID_RUNTIME_CORE_ARG_SPEC_H_

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

// A set of value kinds; combine with |: ArgKind::kInt | ArgKind::kString.
enum class ArgKind : uint8_t {
  kInt = 1 << 0,
  kFloat = 1 << 1,
  kString = 1 << 2,
  kInts = 1 << 3,
  kFloats = 1 << 4,
  kStrings = 1 << 5,
};

constexpr ArgKind operator|(ArgKind a, ArgKind b) {
  return static_cast<ArgKind>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}
constexpr bool Includes(ArgKind set, ArgKind kind) {
  return (static_cast<uint8_t>(set) & static_cast<uint8_t>(kind)) != 0;
}

struct ArgSpec {
  ArgSpec(std::string name, ArgKind kinds) : name(std::move(name)), kinds(kinds) {}
  ArgSpec(std::string name, ArgKind kinds, int64_t min, int64_t max, std::string range_doc)
      : name(std::move(name)), kinds(kinds), min(min), max(max), range_doc(std::move(range_doc)) {}

  std::string name;
  ArgKind kinds = ArgKind::kInt;
  // The valid values of an integer argument, inclusive, and what they mean (for the error).
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  std::string range_doc;
};

// "a list of ints (ints)", "an int (i) or a string (s)".
std::string DescribeKinds(ArgKind kinds);
// What `arg` holds: "a string (s) \"3\"", "no value", "several values (i, ints)".
std::string DescribeArgValue(const Argument& arg);

// The arguments one op or net accepts: the declarations in `groups` (searched in order), and any
// other name too when `any_name` (the declared ones are still checked).
struct AcceptedArgs {
  std::vector<const std::vector<ArgSpec>*> groups;
  bool any_name = false;

  const ArgSpec* Find(const std::string& name) const;
  // Every declared name, sorted, without repeats.
  std::vector<std::string> Names() const;
};

// Empty when every argument names an accepted one, holds one of its kinds, lies in its range and
// appears once; else what is wrong with the first that does not, naming it and what was expected.
// With `unknown`, a name that is not accepted is no error (Caffe2 ignores the arguments an op does
// not read): it is added there, or dropped when it is one of Caffe2's engine hints (IsCaffe2Hint),
// unless it is within two edits of an accepted name (a misspelling: "did you mean") or a Caffe2
// argument that changes results (axis_str, an order other than NCHW), which stay errors.
std::string CheckArguments(const google::protobuf::RepeatedPtrField<Argument>& args,
                           const AcceptedArgs& accepted,
                           std::vector<std::string>* unknown = nullptr);

// Levenshtein distance, letters compared case-insensitively.
size_t EditDistance(const std::string& a, const std::string& b);
// Arguments Caffe2's model helpers write for its cuDNN engine and for themselves
// (cudnn_exhaustive_search, ws_nbytes_limit, dim_in, dim_out, ...), which no braid op reads.
bool IsCaffe2Hint(const std::string& name);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_ARG_SPEC_H_
