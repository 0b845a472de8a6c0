// Typed access to an OperatorDef's (or NetDef's) arguments, by Caffe2's argument names.
//
//   ArgumentReader args(op_def.arg());
//   float value = args.Get<float>("value", 0.f);
//   std::vector<int64_t> shape = args.GetList<int64_t>("shape");
//
// Get throws braid::Error when the argument exists but holds another kind of value. The Add*Arg
// functions append an argument to an op being built: AddIntArg(&op, "kernel", 3).
//
// Thread safety: an ArgumentReader only reads the arguments it was given; several threads may
// read one net's arguments at once. Add*Arg writes the op it is given (its caller's alone).
#ifndef BRAID_RUNTIME_CORE_ARGUMENT_H_
#define BRAID_RUNTIME_CORE_ARGUMENT_H_

#include <string>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

class ArgumentReader {
 public:
  using Arguments = google::protobuf::RepeatedPtrField<Argument>;
  explicit ArgumentReader(const Arguments& args) : args_(args) {}

  bool Has(const std::string& name) const { return Find(name) != nullptr; }
  // T: float, double, int, int64_t, bool, std::string.
  template <typename T> T Get(const std::string& name, const T& default_value) const;
  // T: float, int, int64_t, std::string. Empty when absent.
  template <typename T> std::vector<T> GetList(const std::string& name) const;

 private:
  const Argument* Find(const std::string& name) const;
  const Arguments& args_;
};

void AddIntArg(OperatorDef* op, const std::string& name, int64_t value);
void AddFloatArg(OperatorDef* op, const std::string& name, float value);
void AddStringArg(OperatorDef* op, const std::string& name, const std::string& value);
void AddIntsArg(OperatorDef* op, const std::string& name, const std::vector<int64_t>& values);
// Sets an int argument of a net or an op: replaces one of that name (its value of any kind), else
// adds it.
void SetNetIntArg(NetDef* net, const std::string& name, int64_t value);
void SetIntArg(OperatorDef* op, const std::string& name, int64_t value);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_ARGUMENT_H_
