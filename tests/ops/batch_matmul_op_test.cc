// BatchMatMul: products against a naive loop for every transpose combination, batch dims of
// several ranks, numpy broadcasting of batch dims, errors, numerical gradients (broadcast=0) and
// the refusal to differentiate a broadcast product.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "runtime/core/autodiff.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;

std::vector<float> Random(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(count);
  for (float& x : v) x = uniform(rng);
  return v;
}

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string MatMulOp(bool ta, bool tb, bool broadcast) {
  return R"(type: "BatchMatMul" input: "A" input: "B" output: "Y" arg { name: "trans_a" i: )" +
         std::to_string(ta) + R"( } arg { name: "trans_b" i: )" + std::to_string(tb) +
         R"( } arg { name: "broadcast" i: )" + std::to_string(broadcast) + " }";
}

// The product of matrix `ia` of A and matrix `ib` of B (row-major, transposes applied).
std::vector<double> NaiveProduct(const std::vector<float>& a, int64_t ia,
                                 const std::vector<float>& b, int64_t ib, int64_t m, int64_t k,
                                 int64_t n, bool ta, bool tb) {
  std::vector<double> y(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) {
        const float av = a[ia * m * k + (ta ? p * m + i : i * k + p)];
        const float bv = b[ib * k * n + (tb ? j * k + p : p * n + j)];
        y[i * n + j] += static_cast<double>(av) * bv;
      }
    }
  }
  return y;
}

// A [batch_a..., M, K] and B [batch_b..., K, N] (before transposes); `pairs` lists, per batch
// element of Y, the matrices of A and B it multiplies.
void ExpectProducts(const std::vector<int64_t>& a_batch, const std::vector<int64_t>& b_batch,
                    const std::vector<int64_t>& y_batch,
                    const std::vector<std::pair<int64_t, int64_t>>& pairs, bool broadcast) {
  const int64_t m = 3, k = 4, n = 2;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(MatMulOp(ta, tb, broadcast));
      std::vector<int64_t> a_dims = a_batch, b_dims = b_batch, y_dims = y_batch;
      a_dims.insert(a_dims.end(), {ta ? k : m, ta ? m : k});
      b_dims.insert(b_dims.end(), {tb ? n : k, tb ? k : n});
      y_dims.insert(y_dims.end(), {m, n});
      Workspace ws;
      Feed<float>(&ws, "A", a_dims, Random(Numel(a_dims), 1));
      Feed<float>(&ws, "B", b_dims, Random(Numel(b_dims), 2));
      ASSERT_TRUE(RunOp(&ws, MatMulOp(ta, tb, broadcast)));
      ASSERT_EQ(ShapeOf(ws, "Y"), y_dims);
      const std::vector<float> y = Fetch<float>(ws, "Y");
      for (size_t e = 0; e < pairs.size(); ++e) {
        const std::vector<double> expected =
            NaiveProduct(Fetch<float>(ws, "A"), pairs[e].first, Fetch<float>(ws, "B"),
                         pairs[e].second, m, k, n, ta, tb);
        for (int64_t i = 0; i < m * n; ++i) {
          EXPECT_NEAR(y[e * m * n + i], expected[i], 1e-5) << "batch " << e << " at " << i;
        }
      }
    }
  }
}

TEST(BatchMatMulOpTest, MatchesNaiveLoopForEveryTransposeCombination) {
  ExpectProducts({}, {}, {}, {{0, 0}}, false);                     // plain matrices
  ExpectProducts({3}, {3}, {3}, {{0, 0}, {1, 1}, {2, 2}}, false);  // a batch
  ExpectProducts({2, 2}, {2, 2}, {2, 2}, {{0, 0}, {1, 1}, {2, 2}, {3, 3}}, false);
}

TEST(BatchMatMulOpTest, BroadcastsBatchDimsLikeNumpy) {
  // [2, 3, M, K] x [K, N]: B serves every batch element.
  ExpectProducts({2, 3}, {}, {2, 3}, {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}}, true);
  // [2, 1] x [3]: -> [2, 3]; A's matrix follows dim 0, B's dim 1.
  ExpectProducts({2, 1}, {3}, {2, 3}, {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}, true);
  // [1, 2] x [2, 1]: -> [2, 2].
  ExpectProducts({1, 2}, {2, 1}, {2, 2}, {{0, 0}, {1, 0}, {0, 1}, {1, 1}}, true);
}

TEST(BatchMatMulOpTest, BadShapesAreNamed) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 3, 4}, std::vector<float>(24));
  Feed<float>(&ws, "B", {2, 5, 2}, std::vector<float>(20));
  Feed<float>(&ws, "B3", {3, 4, 2}, std::vector<float>(24));
  Feed<float>(&ws, "B2", {4, 2}, std::vector<float>(8));
  Feed<float>(&ws, "V", {4}, std::vector<float>(4));
  const auto expect = [&ws](const std::string& op, const std::string& part) {
    const std::string infer = InferError(ws, op);
    EXPECT_NE(infer.find(part), std::string::npos) << infer;
    EXPECT_NE(RunOpError(&ws, op).find(part), std::string::npos) << op;
  };
  expect(R"(type: "BatchMatMul" input: "A" input: "B" output: "Y")",
         "A 'A' float32[2,3,4] and B 'B' float32[2,5,2] do not chain: K=4");
  expect(R"(type: "BatchMatMul" input: "A" input: "B3" output: "Y")",
         "have batch dims that differ (or set broadcast=1)");
  expect(R"(type: "BatchMatMul" input: "A" input: "B3" output: "Y" arg { name: "broadcast" i: 1 })",
         "have batch dims that do not broadcast");
  expect(R"(type: "BatchMatMul" input: "A" input: "B2" output: "Y")",
         "must have as many dims (or set broadcast=1)");
  expect(R"(type: "BatchMatMul" input: "A" input: "V" output: "Y" arg { name: "broadcast" i: 1 })",
         "1-D operands are not supported");
}

TEST(BatchMatMulOpTest, GradientsMatchFiniteDifferences) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(MatMulOp(ta, tb, false));
      Workspace ws;
      Feed<float>(&ws, "A", {2, ta ? 4 : 3, ta ? 3 : 4}, Random(24, 3));
      Feed<float>(&ws, "B", {2, tb ? 2 : 4, tb ? 4 : 2}, Random(16, 4));
      EXPECT_TRUE(CheckGradient(ParseOp(MatMulOp(ta, tb, false)), &ws));
    }
  }
  Workspace ws;  // one operand used twice: A A^T
  Feed<float>(&ws, "A", {3, 4}, Random(12, 5));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "BatchMatMul" input: "A" input: "A" output: "Y"
      arg { name: "trans_b" i: 1 })"),
                            &ws));
}

TEST(BatchMatMulOpTest, GradientOfABroadcastProductIsRefused) {
  NetDef net = NetOf({MatMulOp(false, false, true)});
  try {
    AddGradientOperators(&net, {"Y"});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("broadcast=1 has no gradient"), std::string::npos)
        << e.status().message();
  }
}

}  // namespace
}  // namespace braid::test
