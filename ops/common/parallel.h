// ParallelFor: runs an elementwise loop over [0, n) on the calling thread's OpenMP team.
//
// oneDNN and OpenBLAS run on libgomp here, so the elementwise ops (Relu, Sum, Copy, the SGD
// update, ...) use the same team rather than a second thread pool: on the simple executor the
// nn ops' spinning OpenMP workers pick the loop up at once, and no thread is added to compete for
// the cores (OMP_NUM_THREADS sets the team's size for all of them).
//
// The range is cut into one contiguous chunk per thread, with boundaries on 64-byte lines for
// 4-byte elements, so that no two threads write one cache line. Ranges below kMinParallelElements
// (where waking the team costs more than it saves) run inline, as do calls made from inside a
// parallel region.
//
//   ParallelFor(n, [&](int64_t begin, int64_t end) {
//     for (int64_t i = begin; i < end; ++i) y[i] = std::max(x[i], 0.f);
//   });
//
// Thread safety: `body` runs concurrently on disjoint ranges; it must not write shared state
// outside its range. ParallelFor allocates nothing and returns after every chunk has run.
#ifndef BRAID_OPS_COMMON_PARALLEL_H_
#define BRAID_OPS_COMMON_PARALLEL_H_

#include <cstdint>
#include <type_traits>

namespace braid {

inline constexpr int64_t kMinParallelElements = 32 * 1024;

// A non-owning reference to a callable (a std::function would allocate for larger captures).
class RangeBody {
 public:
  template <typename F>
  RangeBody(const F& f)  // NOLINT(google-explicit-constructor): used implicitly at call sites
      : object_(&f), call_([](const void* o, int64_t begin, int64_t end) {
          (*static_cast<const F*>(o))(begin, end);
        }) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  const void* object_;
  void (*call_)(const void*, int64_t, int64_t);
};

void ParallelFor(int64_t n, RangeBody body);

}  // namespace braid

#endif  // BRAID_OPS_COMMON_PARALLEL_H_
