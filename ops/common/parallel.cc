#include "ops/common/parallel.h"

#include <omp.h>

#include <algorithm>

namespace braid {

void ParallelFor(int64_t n, RangeBody body) {
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (n < kMinParallelElements || threads <= 1) {
    if (n > 0) body(0, n);
    return;
  }
  constexpr int64_t kLine = 16;  // 4-byte elements per 64-byte cache line
  const int64_t chunk = ((n + threads - 1) / threads + kLine - 1) / kLine * kLine;
#pragma omp parallel num_threads(threads)
  {
    const int64_t begin = std::min(n, chunk * omp_get_thread_num());
    const int64_t end = std::min(n, begin + chunk);
    if (begin < end) body(begin, end);
  }
}

}  // namespace braid
