#include "runtime/intra_op_threads.h"

#include <omp.h>

#include <algorithm>
#include <thread>

#include "runtime/argument.h"

namespace braid {
namespace {

thread_local int saved_threads = 0;  // the thread's own setting while it is in an arena

}  // namespace

IntraOpThreads::IntraOpThreads(tbb::task_arena* arena, int threads_per_op)
    : tbb::task_scheduler_observer(*arena), threads_per_op_(threads_per_op) {
  observe(true);
}

IntraOpThreads::~IntraOpThreads() { observe(false); }

void IntraOpThreads::on_scheduler_entry(bool /*is_worker*/) {
  saved_threads = omp_get_max_threads();
  omp_set_num_threads(std::min(threads_per_op_, saved_threads));  // never above OMP_NUM_THREADS
}

void IntraOpThreads::on_scheduler_exit(bool /*is_worker*/) {
  if (saved_threads > 0) omp_set_num_threads(saved_threads);
  saved_threads = 0;
}

int IntraOpThreadsFor(const NetDef& def, int workers) {
  const int64_t set = ArgumentReader(def.arg()).Get<int64_t>("intra_op_threads", 0);
  if (set > 0) return static_cast<int>(set);
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return std::max(1, hardware / std::max(1, workers));
}

}  // namespace braid
