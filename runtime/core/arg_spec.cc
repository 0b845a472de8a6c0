#include "runtime/core/arg_spec.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

namespace braid {
namespace {

constexpr std::pair<ArgKind, const char*> kKindNames[] = {
    {ArgKind::kInt, "an int (i)"},
    {ArgKind::kFloat, "a float (f)"},
    {ArgKind::kString, "a string (s)"},
    {ArgKind::kInts, "a list of ints (ints)"},
    {ArgKind::kFloats, "a list of floats (floats)"},
    {ArgKind::kStrings, "a list of strings (strings)"},
};

constexpr size_t kShownStringChars = 40;

std::string Quoted(const std::string& s) {
  if (s.size() <= kShownStringChars) return "\"" + s + "\"";
  return "\"" + s.substr(0, kShownStringChars) + "...\"";
}

// The fields `arg` sets, by their proto names.
std::vector<std::string> SetFields(const Argument& arg) {
  std::vector<std::string> fields;
  if (arg.has_i()) fields.push_back("i");
  if (arg.has_f()) fields.push_back("f");
  if (arg.has_s()) fields.push_back("s");
  if (arg.has_t()) fields.push_back("t");
  if (arg.has_n()) fields.push_back("n");
  if (arg.ints_size() > 0) fields.push_back("ints");
  if (arg.floats_size() > 0) fields.push_back("floats");
  if (arg.strings_size() > 0) fields.push_back("strings");
  if (arg.tensors_size() > 0) fields.push_back("tensors");
  if (arg.nets_size() > 0) fields.push_back("nets");
  return fields;
}

// Whether `arg`, which sets at most one field, holds a value of one of `kinds`.
bool HoldsKind(const Argument& arg, ArgKind kinds) {
  if (arg.has_i()) return Includes(kinds, ArgKind::kInt) || Includes(kinds, ArgKind::kFloat);
  if (arg.has_f()) return Includes(kinds, ArgKind::kFloat);
  if (arg.has_s()) return Includes(kinds, ArgKind::kString);
  if (arg.ints_size() > 0) return Includes(kinds, ArgKind::kInts);
  if (arg.floats_size() > 0) return Includes(kinds, ArgKind::kFloats);
  if (arg.strings_size() > 0) return Includes(kinds, ArgKind::kStrings);
  if (arg.has_t() || arg.has_n() || arg.tensors_size() > 0 || arg.nets_size() > 0) return false;
  // No value: an empty list.
  return Includes(kinds, ArgKind::kInts) || Includes(kinds, ArgKind::kFloats) ||
         Includes(kinds, ArgKind::kStrings);
}

std::string CheckOne(const Argument& arg, const ArgSpec& spec) {
  const std::string name = "argument '" + arg.name() + "'";
  if (SetFields(arg).size() > 1 || !HoldsKind(arg, spec.kinds)) {
    return name + " must be " + DescribeKinds(spec.kinds) + ", got " + DescribeArgValue(arg);
  }
  if (arg.has_i() && (arg.i() < spec.min || arg.i() > spec.max)) {
    return name + " = " + std::to_string(arg.i()) + " is out of range (valid: " + spec.range_doc +
           ")";
  }
  return "";
}

}  // namespace

std::string DescribeKinds(ArgKind kinds) {
  std::string s;
  for (const auto& [kind, name] : kKindNames) {
    if (Includes(kinds, kind)) s += (s.empty() ? "" : " or ") + std::string(name);
  }
  return s;
}

std::string DescribeArgValue(const Argument& arg) {
  const std::vector<std::string> fields = SetFields(arg);
  if (fields.empty()) return "no value";
  if (fields.size() > 1) {
    std::string list;
    for (const std::string& f : fields) list += (list.empty() ? "" : ", ") + f;
    return "several values (" + list + ")";
  }
  if (arg.has_i()) return "an int (i) " + std::to_string(arg.i());
  if (arg.has_f()) return "a float (f) " + std::to_string(arg.f());
  if (arg.has_s()) return "a string (s) " + Quoted(arg.s());
  if (arg.has_t()) return "a tensor (t)";
  if (arg.has_n()) return "a net (n)";
  if (arg.ints_size() > 0) return "a list of ints (ints)";
  if (arg.floats_size() > 0) return "a list of floats (floats)";
  if (arg.strings_size() > 0) return "a list of strings (strings)";
  if (arg.tensors_size() > 0) return "a list of tensors (tensors)";
  return "a list of nets (nets)";
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      bool same = std::tolower(a[i - 1]) == std::tolower(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

bool IsCaffe2Hint(const std::string& name) {
  static const auto* hints = new std::set<std::string>{
      "cudnn_exhaustive_search", "exhaustive_search", "ws_nbytes_limit", "use_cudnn",
      "float16_compute", "shared_buffer", "dim_in", "dim_out", "init_params", "cudnn_state"};
  return hints->count(name) > 0;
}

const ArgSpec* AcceptedArgs::Find(const std::string& name) const {
  for (const std::vector<ArgSpec>* group : groups) {
    for (const ArgSpec& spec : *group) {
      if (spec.name == name) return &spec;
    }
  }
  return nullptr;
}

std::vector<std::string> AcceptedArgs::Names() const {
  std::vector<std::string> names;
  for (const std::vector<ArgSpec>* group : groups) {
    for (const ArgSpec& spec : *group) names.push_back(spec.name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string CheckArguments(const google::protobuf::RepeatedPtrField<Argument>& args,
                           const AcceptedArgs& accepted, std::vector<std::string>* unknown) {
  for (int a = 0; a < args.size(); ++a) {
    const Argument& arg = args.Get(a);
    for (int b = 0; b < a; ++b) {
      if (args.Get(b).name() == arg.name()) return "argument '" + arg.name() + "' is given twice";
    }
    const ArgSpec* spec = accepted.Find(arg.name());
    if (spec == nullptr) {
      if (accepted.any_name) continue;
      std::string names, near;
      for (const std::string& n : accepted.Names()) {
        names += (names.empty() ? "" : ", ") + n;
        if (near.empty() && EditDistance(arg.name(), n) <= 2) near = n;
      }
      if (unknown != nullptr && IsCaffe2Hint(arg.name())) continue;
      // Lenient, a name is ignored unless it is a misspelling of an accepted one, or one of
      // Caffe2's arguments that change what an op computes.
      const bool changes_results =
          arg.name() == "axis_str" || (arg.name() == "order" && arg.s() != "NCHW");
      if (unknown != nullptr && near.empty() && !changes_results) {
        unknown->push_back(arg.name());
        continue;
      }
      if (!near.empty()) {
        return "unknown argument '" + arg.name() + "' (did you mean '" + near + "'? accepted: " +
               names + ")";
      }
      return "unknown argument '" + arg.name() + "' (accepted: " + names + ")";
    }
    std::string problem = CheckOne(arg, *spec);
    if (!problem.empty()) return problem;
  }
  return "";
}

}  // namespace braid
