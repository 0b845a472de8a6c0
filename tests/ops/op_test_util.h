// Helpers for op tests: feed and fetch blobs, and run one op as a one-op net while checking that
// its schema's shape inference agrees with what its kernel produced.
//
//   Workspace ws;
//   Feed<float>(&ws, "X", {2}, {-1, 2});
//   ASSERT_TRUE(RunOp(&ws, R"(type: "Relu" input: "X" output: "Y")"));
//   EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{0, 2}));
#ifndef BRAID_TESTS_OPS_OP_TEST_UTIL_H_
#define BRAID_TESTS_OPS_OP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/workspace.h"

namespace braid::test {

// `n` floats uniform in [lo, hi) from `seed` (std::mt19937): test inputs.
std::vector<float> UniformFloats(int64_t n, uint32_t seed, float lo = -1.f, float hi = 1.f);
// Every element of `got` within `relative` x the largest |want| of `want`'s (same size).
void ExpectCloseToScale(const std::vector<float>& got, const std::vector<float>& want,
                        float relative = 1e-5f);

// The types of `net`'s ops, in order.
std::vector<std::string> OpTypes(const NetDef& net);

// A net a graph rewrite must leave alone: its ops (text format), the blobs callers fetch, and why.
struct UnrewritableNet {
  std::string why;
  std::vector<std::string> ops;
  std::vector<std::string> outputs;  // external outputs
};
// Expects `rewrite` (returning how many ops it removed) to remove none from each net and change
// nothing in it.
void ExpectLeftAlone(const std::function<int(NetDef*)>& rewrite,
                     const std::vector<UnrewritableNet>& nets);

// Sample mean and (population) standard deviation, for checking random fills.
inline double Mean(const std::vector<float>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
inline double StdDev(const std::vector<float>& v) {
  const double mean = Mean(v);
  double sq = 0;
  for (float x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(v.size()));
}

OperatorDef ParseOp(const std::string& text);
// A net named "test" holding the ops, each given in OperatorDef text format.
NetDef NetOf(const std::vector<std::string>& op_texts, const std::string& type = "simple");
// An init net named "init" of GivenTensorFill ops giving the float32 blobs `names` of `ws` their
// current shapes and values (a Predictor's init net in tests).
NetDef InitNetOf(const Workspace& ws, const std::vector<std::string>& names);

template <typename T>
void Feed(Workspace* ws, const std::string& name, std::vector<int64_t> dims,
          const std::vector<T>& values) {
  Tensor* t = ws->CreateBlob(name);
  t->Resize(DTypeOf<T>(), std::move(dims));
  ASSERT_EQ(t->numel(), static_cast<int64_t>(values.size())) << "feeding " << name;
  std::copy(values.begin(), values.end(), t->mutable_data<T>());
}

template <typename T>
std::vector<T> Fetch(const Workspace& ws, const std::string& name) {
  const Tensor* t = ws.GetBlob(name);
  if (t == nullptr) {
    ADD_FAILURE() << "no blob " << name;
    return {};
  }
  const T* data = t->data<T>();
  return std::vector<T>(data, data + t->numel());
}

std::vector<int64_t> ShapeOf(const Workspace& ws, const std::string& name);

// Runs the op once; fails if it fails, or if the schema's inferred output types and shapes (from
// the input blobs as they were before the run) differ from the outputs. Outputs the schema cannot
// infer fail too, unless `allow_unknown`.
::testing::AssertionResult RunOp(Workspace* ws, const std::string& op_text,
                                 bool allow_unknown = false);
// Runs the op once expecting failure; the error's message ("" if it succeeded).
std::string RunOpError(Workspace* ws, const std::string& op_text);
// The message of the braid::Error the op's schema inference throws ("" if none).
std::string InferError(const Workspace& ws, const std::string& op_text);
// Expects running the op in `ws` to fail with `fragment` in its error; ExpectInferAndRunFail
// first expects the schema's inference (from `ws` as it is) to fail with it too.
void ExpectRunFails(Workspace* ws, const std::string& op_text, const std::string& fragment);
void ExpectInferAndRunFail(Workspace* ws, const std::string& op_text,
                           const std::string& fragment);

}  // namespace braid::test

#endif  // BRAID_TESTS_OPS_OP_TEST_UTIL_H_
