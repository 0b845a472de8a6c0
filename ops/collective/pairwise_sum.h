// PairwiseSum: the order in which braid's all-reduces add the ranks' values of one element.
//
// Ranks are added pairwise, bottom up, in rank order: adjacent ranks first, then adjacent pairs,
// and so on; a rank left over at a level is carried up unchanged ((a + b) + c for three ranks,
// ((a + b) + (c + d)) + (e + f) for six). The ranks are pushed one at a time onto a stack of
// partial sums, as bits onto a binary counter: two partial sums of the same level merge into one of
// the next, and what is left is added from the right at the end.
//
// Why this order: a job of P processes with L local devices each reduces hierarchically (each
// process sums its L devices, then the processes add their partial sums). With L a power of two,
// the first log2(L) levels of the order are exactly each process's local sums, so for P = 2 (where
// every order of adding the two partial sums gives the same bits) the job adds exactly as one
// process with 2L devices does; scaling by a power of two (averaging) is exact too. Pairwise
// summation also bounds the rounding error by O(log n) ulps instead of O(n).
//
//   const float* in[4] = {a, b, c, d};
//   PairwiseSum(4, [&](int r) { return in[r][k]; });   // (a[k] + b[k]) + (c[k] + d[k])
//   PairwiseSumRows(in, 4, 0, count, out);              // the same for count elements
//
// Usable from host code and from CUDA kernels (PairwiseSum only). Pure functions.
#ifndef BRAID_OPS_COLLECTIVE_PAIRWISE_SUM_H_
#define BRAID_OPS_COLLECTIVE_PAIRWISE_SUM_H_

#include <cstdint>

#include "ops/common/host_device.h"

namespace braid {

// Partial sums held at once: enough for 2^(kPairwiseLevels - 1) ranks and more.
inline constexpr int kPairwiseLevels = 32;

// The sum of load(0), ..., load(n - 1) (n >= 1) in pairwise order.
template <typename Load>
BRAID_HOST_DEVICE inline float PairwiseSum(int n, const Load& load) {
  float sum[kPairwiseLevels];
  int level[kPairwiseLevels];
  int top = 0;
  for (int r = 0; r < n; ++r) {
    sum[top] = load(r);
    level[top] = 0;
    ++top;
    while (top >= 2 && level[top - 1] == level[top - 2]) {
      sum[top - 2] += sum[top - 1];
      ++level[top - 2];
      --top;
    }
  }
  float total = sum[--top];
  while (top > 0) total = sum[--top] + total;
  return total;
}

// out[k] = PairwiseSum over rows[0][k], ..., rows[n - 1][k] for k in [begin, end) (n >= 1); the
// loops run over blocks of elements, so they vectorise. `out` may be one of the rows.
void PairwiseSumRows(const float* const* rows, int n, int64_t begin, int64_t end, float* out);

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_PAIRWISE_SUM_H_
