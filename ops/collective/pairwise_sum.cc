#include "ops/collective/pairwise_sum.h"

#include <algorithm>

namespace braid {

void PairwiseSumRows(const float* const* rows, int n, int64_t begin, int64_t end, float* out) {
  constexpr int64_t kBlock = 128;
  float partial[kPairwiseLevels][kBlock];
  int level[kPairwiseLevels];
  for (int64_t at = begin; at < end; at += kBlock) {
    const int64_t m = std::min(kBlock, end - at);
    int top = 0;
    for (int r = 0; r < n; ++r) {
      std::copy_n(rows[r] + at, m, partial[top]);
      level[top++] = 0;
      while (top >= 2 && level[top - 1] == level[top - 2]) {
        float* left = partial[top - 2];
        const float* right = partial[top - 1];
        for (int64_t i = 0; i < m; ++i) left[i] += right[i];
        ++level[top - 2];
        --top;
      }
    }
    float* total = partial[--top];
    while (top > 0) {
      const float* left = partial[--top];
      for (int64_t i = 0; i < m; ++i) total[i] = left[i] + total[i];
    }
    std::copy_n(total, m, out + at);
  }
}

}  // namespace braid
