#include "runtime/core/argument.h"

#include <cstdint>

#include "braid/status.h"

namespace braid {
namespace {

[[noreturn]] void WrongKind(const Argument& arg, const char* wanted) {
  throw Error(Status::InvalidArgument("argument '" + arg.name() + "' should be " + wanted));
}

}  // namespace

const Argument* ArgumentReader::Find(const std::string& name) const {
  for (const Argument& a : args_) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

template <>
float ArgumentReader::Get<float>(const std::string& name, const float& default_value) const {
  const Argument* a = Find(name);
  if (a == nullptr) return default_value;
  if (a->has_f()) return a->f();
  if (a->has_i()) return static_cast<float>(a->i());
  WrongKind(*a, "a float (f)");
}

template <>
double ArgumentReader::Get<double>(const std::string& name, const double& default_value) const {
  return Get<float>(name, static_cast<float>(default_value));
}

template <>
int64_t ArgumentReader::Get<int64_t>(const std::string& name, const int64_t& default_value) const {
  const Argument* a = Find(name);
  if (a == nullptr) return default_value;
  if (a->has_i()) return a->i();
  WrongKind(*a, "an integer (i)");
}

template <>
int ArgumentReader::Get<int>(const std::string& name, const int& default_value) const {
  return static_cast<int>(Get<int64_t>(name, default_value));
}

template <>
bool ArgumentReader::Get<bool>(const std::string& name, const bool& default_value) const {
  return Get<int64_t>(name, default_value ? 1 : 0) != 0;
}

template <>
std::string ArgumentReader::Get<std::string>(const std::string& name,
                                             const std::string& default_value) const {
  const Argument* a = Find(name);
  if (a == nullptr) return default_value;
  if (a->has_s()) return a->s();
  WrongKind(*a, "a string (s)");
}

template <>
std::vector<float> ArgumentReader::GetList<float>(const std::string& name) const {
  const Argument* a = Find(name);
  if (a == nullptr) return {};
  return {a->floats().begin(), a->floats().end()};
}

template <>
std::vector<int64_t> ArgumentReader::GetList<int64_t>(const std::string& name) const {
  const Argument* a = Find(name);
  if (a == nullptr) return {};
  return {a->ints().begin(), a->ints().end()};
}

template <>
std::vector<int> ArgumentReader::GetList<int>(const std::string& name) const {
  std::vector<int64_t> wide = GetList<int64_t>(name);
  return {wide.begin(), wide.end()};
}

template <>
std::vector<std::string> ArgumentReader::GetList<std::string>(const std::string& name) const {
  const Argument* a = Find(name);
  if (a == nullptr) return {};
  return {a->strings().begin(), a->strings().end()};
}

void AddIntArg(OperatorDef* op, const std::string& name, int64_t value) {
  Argument* arg = op->add_arg();
  arg->set_name(name);
  arg->set_i(value);
}

void AddFloatArg(OperatorDef* op, const std::string& name, float value) {
  Argument* arg = op->add_arg();
  arg->set_name(name);
  arg->set_f(value);
}

void AddStringArg(OperatorDef* op, const std::string& name, const std::string& value) {
  Argument* arg = op->add_arg();
  arg->set_name(name);
  arg->set_s(value);
}

void AddIntsArg(OperatorDef* op, const std::string& name, const std::vector<int64_t>& values) {
  Argument* arg = op->add_arg();
  arg->set_name(name);
  arg->mutable_ints()->Add(values.begin(), values.end());
}

namespace {

void SetIntArgIn(google::protobuf::RepeatedPtrField<Argument>* args, const std::string& name,
                 int64_t value) {
  for (Argument& arg : *args) {
    if (arg.name() != name) continue;
    arg.Clear();
    arg.set_name(name);
    arg.set_i(value);
    return;
  }
  Argument* arg = args->Add();
  arg->set_name(name);
  arg->set_i(value);
}

}  // namespace

void SetNetIntArg(NetDef* net, const std::string& name, int64_t value) {
  SetIntArgIn(net->mutable_arg(), name, value);
}

void SetIntArg(OperatorDef* op, const std::string& name, int64_t value) {
  SetIntArgIn(op->mutable_arg(), name, value);
}

}  // namespace braid
