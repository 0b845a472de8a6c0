#include "runtime/dist/process_group.h"

#include <atomic>

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <csignal>
#include <mutex>
#include <utility>
#include <vector>

namespace braid {
namespace {

std::string Describe(const ProcessGroupOptions& o) {
  return "rank " + std::to_string(o.rank) + " of " + std::to_string(o.world_size) + " (job '" +
         o.job_name + "', rendezvous " + o.rendezvous + ")";
}

Status CheckOptions(const ProcessGroupOptions& o) {
  if (o.world_size < 1) {
    return Status::InvalidArgument("process group: world size must be at least 1, got " +
                                   std::to_string(o.world_size));
  }
  if (o.rank < 0 || o.rank >= o.world_size) {
    return Status::InvalidArgument("process group: rank " + std::to_string(o.rank) +
                                   " is outside [0, " + std::to_string(o.world_size) + ")");
  }
  if (o.job_name.empty()) return Status::InvalidArgument("process group: empty job name");
  if (o.timeout.count() <= 0) return Status::InvalidArgument("process group: timeout must be > 0");
  return Status::OK();
}

std::shared_ptr<gloo::transport::Device> CreateTcpDevice(const ProcessGroupOptions& o) {
  gloo::transport::tcp::attr attr;
  if (!o.hostname.empty()) {
    attr.hostname = o.hostname;
  } else if (!o.interface.empty()) {
    attr.iface = o.interface;
  } else {
    attr.hostname = "127.0.0.1";
  }
  return gloo::transport::tcp::CreateDevice(attr);
}

// The Gloo context of every rank; throws (Gloo or braid::Error) on failure.
std::shared_ptr<gloo::Context> ConnectMesh(const ProcessGroupOptions& o, RendezvousStore& store) {
  auto device = CreateTcpDevice(o);
  auto context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.world_size);
  context->setTimeout(o.timeout);
  gloo::rendezvous::PrefixStore prefixed(o.job_name, store.store());
  context->connectFullMesh(prefixed, device);
  return context;
}

// Whether a Gloo error is a timeout: "Timed out waiting 3000ms for recv operation to complete",
// "Read timeout [127.0.0.1]:4013", "Application timeout caused pair closure".
bool IsTimeout(const std::string& gloo_message) {
  return gloo_message.find("imeout") != std::string::npos ||
         gloo_message.find("imed out") != std::string::npos;
}

// The lost ranks a failed collective's Gloo error names (`named`), and behind them the ranks lost
// first; "unknown" rather than a guess when it names none (a collective that timed out waiting
// names no connection).
std::string DescribeLoss(const std::vector<int>& named, const std::vector<int>& first,
                         bool timeout) {
  if (named.empty()) {
    return timeout ? "a peer rank stopped or is stuck; which rank is unknown"
                   : "a connection to a peer rank failed; which rank is unknown";
  }
  if (timeout) return "waiting for " + DescribeRanks(named) + " timed out (stuck or slow)";
  const bool one = named.size() == 1;
  std::string text = std::string(one ? "a connection to " : "the connections to ") +
                     DescribeRanks(named) + (one ? " was" : " were") + " lost";
  if (first == named) return text + " (the rank died or closed its connections)";
  return text + " (" + (one ? "it" : "they") + " gave up after losing others; lost first: " +
         DescribeRanks(first) + ")";
}

}  // namespace

Status ParseAllreduceAlgorithm(const std::string& name, AllreduceAlgorithm* algorithm) {
  if (name == "ring") {
    *algorithm = AllreduceAlgorithm::kRing;
  } else if (name == "halving_doubling") {
    *algorithm = AllreduceAlgorithm::kHalvingDoubling;
  } else {
    return Status::InvalidArgument("unknown all-reduce algorithm '" + name +
                                   "' (expected 'ring' or 'halving_doubling')");
  }
  return Status::OK();
}

namespace {

uint64_t NextGroupId() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

ProcessGroup::ProcessGroup(const ProcessGroupOptions& options,
                           std::unique_ptr<RendezvousStore> store,
                           std::shared_ptr<gloo::Context> context, PeerAddresses peers)
    : id_(NextGroupId()),
      options_(options),
      rank_(options.rank),
      size_(options.world_size),
      store_(std::move(store)),
      context_(std::move(context)),
      peers_(std::move(peers)),
      loss_reports_(store_.get(), options.job_name, options.rank) {}

ProcessGroup::~ProcessGroup() = default;

Status ProcessGroup::Connect(const ProcessGroupOptions& options,
                             std::unique_ptr<ProcessGroup>* group) {
  Status s = CheckOptions(options);
  if (!s.ok()) return s;
  // A write to the socket of a peer that died raises SIGPIPE, which would kill this rank instead
  // of failing its collective with an error naming the lost connection (seen with 4 ranks).
  std::signal(SIGPIPE, SIG_IGN);
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::unique_ptr<RendezvousStore> store;
  s = RendezvousStore::Open(options.rendezvous, deadline, &store);
  if (!s.ok()) return Status(s.code(), Describe(options) + ": " + s.message());
  s = store->Arrive(options.job_name, options.rank, options.world_size, deadline);
  if (!s.ok()) return Status(s.code(), Describe(options) + ": " + s.message());
  std::shared_ptr<gloo::Context> context;
  try {
    context = ConnectMesh(options, *store);
  } catch (const std::exception& e) {
    return Status::IoError(Describe(options) + ": connecting to the other ranks failed: " +
                           e.what());
  }
  PeerAddresses peers;
  s = PeerAddresses::Exchange(*context, *store, options.job_name, deadline, &peers);
  if (!s.ok()) return Status(s.code(), Describe(options) + ": " + s.message());
  group->reset(new ProcessGroup(options, std::move(store), std::move(context), std::move(peers)));
  return Status::OK();
}

Status ProcessGroup::ShareFromRankZero(const std::string& key, std::string* value) {
  const std::string full_key = options_.job_name + "/shared/" + key;
  Status s = rank_ == 0 ? store_->Set(full_key, *value)
                        : store_->Get(full_key, std::chrono::steady_clock::now() + options_.timeout,
                                      value);
  if (s.ok()) return s;
  return Status(s.code(),
                "sharing '" + key + "' from rank 0 on " + Describe(options_) + ": " + s.message());
}

Status ProcessGroup::GatherFromEveryRank(const std::string& key, const std::string& value,
                                         std::vector<std::string>* values) {
  const std::string prefix = options_.job_name + "/gathered/" + key + "/";
  Status s = store_->Set(prefix + std::to_string(rank_), value);
  values->assign(size_, "");
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  std::vector<int> missing;
  for (int r = 0; r < size_ && s.ok(); ++r) {
    if (r == rank_) {
      (*values)[r] = value;
      continue;
    }
    Status got = store_->Get(prefix + std::to_string(r), deadline, &(*values)[r]);
    if (got.code() == StatusCode::kDeadlineExceeded) {
      missing.push_back(r);
    } else {
      s = got;
    }
  }
  if (s.ok() && !missing.empty()) {
    s = Status::DeadlineExceeded(DescribeRanks(missing) + " stored nothing within " +
                                 std::to_string(options_.timeout.count()) + " ms");
  }
  if (s.ok()) return s;
  return Status(s.code(), "gathering '" + key + "' from every rank on " + Describe(options_) +
                              ": " + s.message());
}

Status ProcessGroup::CollectiveError(const std::string& what, const std::exception& e) {
  const std::string gloo_message = e.what();
  const bool timeout = IsTimeout(gloo_message);
  const std::vector<int> named = peers_.RanksIn(gloo_message);
  std::vector<int> first = named;
  if (!timeout) {
    loss_reports_.Report(named);  // before this error can end the process and close connections
    first = loss_reports_.FirstLost(named);
  }
  std::string text = what + " on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                     (timeout ? " timed out after " + std::to_string(options_.timeout.count()) +
                                    " ms: "
                              : " failed: ") +
                     DescribeLoss(named, first, timeout) + ": " + gloo_message;
  return timeout ? Status::DeadlineExceeded(std::move(text)) : Status::IoError(std::move(text));
}

Status ProcessGroup::AllreduceSum(float* data, size_t count, uint32_t tag,
                                  AllreduceAlgorithm algorithm) {
  if (count == 0 || size_ == 1) return Status::OK();
  const std::string what =
      "AllreduceSum (tag " + std::to_string(tag) + ", " + std::to_string(count) + " floats)";
  try {
    gloo::AllreduceOptions opts(context_);
    opts.setOutput(data, count);
    opts.setTag(tag);
    opts.setTimeout(options_.timeout);
    opts.setAlgorithm(algorithm == AllreduceAlgorithm::kRing
                          ? gloo::AllreduceOptions::Algorithm::RING
                          : gloo::AllreduceOptions::Algorithm::BCUBE);
    void (*sum)(void*, const void*, const void*, size_t) = &gloo::sum<float>;
    opts.setReduceFunction(sum);
    gloo::allreduce(opts);
  } catch (const std::exception& e) {
    return CollectiveError(what, e);
  }
  return Status::OK();
}

Status ProcessGroup::Barrier(uint32_t tag) {
  if (size_ == 1) return Status::OK();
  try {
    gloo::BarrierOptions opts(context_);
    opts.setTag(tag);
    opts.setTimeout(options_.timeout);
    gloo::barrier(opts);
  } catch (const std::exception& e) {
    return CollectiveError("Barrier (tag " + std::to_string(tag) + ")", e);
  }
  return Status::OK();
}

namespace {
std::mutex current_group_mu;
std::unique_ptr<ProcessGroup> current_group;  // guarded by current_group_mu
}  // namespace

ProcessGroup* CurrentProcessGroup() {
  std::lock_guard<std::mutex> lock(current_group_mu);
  return current_group.get();
}

void SetProcessGroup(std::unique_ptr<ProcessGroup> group) {
  std::unique_ptr<ProcessGroup> previous;
  {
    std::lock_guard<std::mutex> lock(current_group_mu);
    previous = std::exchange(current_group, std::move(group));
  }
}  // the previous group is destroyed outside the lock

}  // namespace braid
