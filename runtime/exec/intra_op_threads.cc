#include "runtime/exec/intra_op_threads.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <glog/logging.h>

#include "planner/bitset.h"
#include "runtime/core/argument.h"
#include "runtime/exec/net_args.h"

namespace braid {
namespace {

// Read while libbraid loads, on the loading thread, before any net changed a thread's setting.
const int kProcessThreads = std::max(1, omp_get_max_threads());

// One token per hardware thread, granted first come, first served: once a thread waits (for more
// tokens than are free), later ones queue behind it, so an op wanting every core is not starved by
// one-thread ops that keep taking the cores one at a time. While nobody waits, taking and giving
// back tokens is one atomic operation each.
class CoreTokens {
 public:
  static CoreTokens& Global() {
    static CoreTokens* const tokens =  // used by detached threads: never destroyed
        new CoreTokens(std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
    return *tokens;
  }
  int total() const { return total_; }
  // Takes n tokens (1 <= n <= total()), waiting for its turn.
  void Acquire(int n) {
    if (queued_.load() == 0 && TryTake(n)) return;
    std::unique_lock<std::mutex> lock(mu_);
    Waiter waiter{n};
    queue_.push_back(&waiter);
    queued_.fetch_add(1);
    GrantInOrder();  // tokens given back before this thread queued
    cv_.wait(lock, [&] { return waiter.granted; });
  }
  void Release(int n) {
    free_.fetch_add(n);
    if (queued_.load() == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    GrantInOrder();
  }

 private:
  struct Waiter {
    int tokens;
    bool granted = false;  // guarded by mu_
  };
  explicit CoreTokens(int total) : total_(total), free_(total) {}
  bool TryTake(int n) {
    int free = free_.load();
    while (free >= n) {
      if (free_.compare_exchange_weak(free, free - n)) return true;
    }
    return false;
  }
  // With mu_ held: grants the queue's head while its tokens are free.
  void GrantInOrder() {
    bool granted = false;
    while (!queue_.empty() && TryTake(queue_.front()->tokens)) {
      queue_.front()->granted = true;
      queue_.pop_front();
      queued_.fetch_sub(1);
      granted = true;
    }
    if (granted) cv_.notify_all();
  }

  const int total_;
  std::atomic<int> free_;
  std::atomic<int> queued_{0};  // queue_.size(), readable without mu_
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Waiter*> queue_;  // guarded by mu_: waiting threads, first come first
};

// Longest paths (in ops) from a source to each op, counting it, and from it to a sink.
void LongestPaths(const DataflowGraph& g, std::vector<int>* to, std::vector<int>* from) {
  const int n = g.num_ops();
  to->assign(n, 1);
  from->assign(n, 1);
  for (int i = 0; i < n; ++i) {
    for (int p : g.parents[i]) (*to)[i] = std::max((*to)[i], (*to)[p] + 1);
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int c : g.children[i]) (*from)[i] = std::max((*from)[i], (*from)[c] + 1);
  }
}

}  // namespace

int ProcessIntraOpThreads() { return kProcessThreads; }

std::vector<int> OpsAtOnce(const DataflowGraph& g, const std::vector<int>& resource_of,
                           int concurrency) {
  const int n = g.num_ops();
  std::vector<int> to, from;
  LongestPaths(g, &to, &from);
  int longest = 0;
  for (int i = 0; i < n; ++i) longest = std::max(longest, to[i] + from[i] - 1);
  // The critical ops (on a longest path), and those at each depth (to) of the path: ops at one
  // depth run side by side, ops at different depths of one path one after another.
  std::vector<int> critical(n, -1);
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (to[i] + from[i] - 1 == longest) critical[i] = m++;
  }
  std::vector<Bitset> at_depth(longest + 1, Bitset(m));
  for (int i = 0; i < n; ++i) {
    if (critical[i] >= 0) at_depth[to[i]].Set(critical[i]);
  }
  std::vector<Bitset> related(n, Bitset(m));  // critical ancestors and descendants
  for (int i = 0; i < n; ++i) {
    for (int p : g.parents[i]) {
      related[i].OrWith(related[p]);
      if (critical[p] >= 0) related[i].Set(critical[p]);
    }
  }
  std::vector<Bitset> descendants(n, Bitset(m));
  for (int i = n - 1; i >= 0; --i) {
    for (int c : g.children[i]) {
      descendants[i].OrWith(descendants[c]);
      if (critical[c] >= 0) descendants[i].Set(critical[c]);
    }
    related[i].OrWith(descendants[i]);
    if (critical[i] >= 0) related[i].Set(critical[i]);
  }
  std::map<int, Bitset> on_resource;  // the critical ops of each serial resource
  for (int i = 0; i < n; ++i) {
    if (critical[i] < 0 || resource_of[i] < 0) continue;
    on_resource.try_emplace(resource_of[i], m).first->second.Set(critical[i]);
  }
  std::vector<int> at_once(n);
  for (int i = 0; i < n; ++i) {
    Bitset beside(m);  // critical ops that may run beside op i
    beside.SetAll();
    beside.AndNot(related[i]);
    if (auto it = on_resource.find(resource_of[i]); resource_of[i] >= 0 && it != on_resource.end()) {
      beside.AndNot(it->second);
    }
    // The executors start an op as soon as its parents are done: at depth to[i] of the path, beside
    // the critical ops there.
    Bitset there = at_depth[to[i]];
    there.AndWith(beside);
    at_once[i] =
        std::min(std::max(1, there.Count() + (critical[i] >= 0 ? 1 : 0)), std::max(1, concurrency));
  }
  return at_once;
}

std::vector<int> IntraOpBudgets(const NetDef& def, const std::vector<int>& ops_at_once) {
  const int64_t set = ArgumentReader(def.arg()).Get<int64_t>(kIntraOpThreadsArg, 0);
  std::vector<int> budgets(ops_at_once.size());
  for (size_t i = 0; i < budgets.size(); ++i) {
    budgets[i] = set > 0 ? static_cast<int>(set) : std::max(1, kProcessThreads / ops_at_once[i]);
  }
  return budgets;
}

int HardwareThreads() { return CoreTokens::Global().total(); }

namespace {
// The calling thread's OpenMP team size as braid last set or read it; 0 before either. Initial-exec
// TLS (as libgomp's own), so the per-op check is one load rather than a call into libgomp.
thread_local int thread_team __attribute__((tls_model("initial-exec"))) = 0;
}  // namespace

void SetIntraOpThreads(int threads) {
  if (thread_team == threads) return;
  omp_set_num_threads(threads);
  thread_team = threads;
}

int IntraOpThreads() { return thread_team = omp_get_max_threads(); }

CoreTokensHeld::CoreTokensHeld(int threads)
    : held_(std::clamp(threads, 1, CoreTokens::Global().total())) {
  CoreTokens::Global().Acquire(held_);
}

CoreTokensHeld::~CoreTokensHeld() { CoreTokens::Global().Release(held_); }

}  // namespace braid
