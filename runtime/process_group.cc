#include "runtime/process_group.h"

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

#include "runtime/rendezvous_store.h"

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

ProcessGroup::ProcessGroup(const ProcessGroupOptions& options,
                           std::shared_ptr<gloo::Context> context)
    : options_(options),
      rank_(options.rank),
      size_(options.world_size),
      context_(std::move(context)) {}

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
  group->reset(new ProcessGroup(options, std::move(context)));
  return Status::OK();
}

Status ProcessGroup::CollectiveError(const std::string& what, const std::exception& e) const {
  const std::string message = std::string(e.what());
  const bool timeout = message.find("imeout") != std::string::npos;
  std::string text = what + " on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                     (timeout ? " timed out after " + std::to_string(options_.timeout.count()) +
                                    " ms (a peer rank stopped or is stuck): "
                              : " failed: a connection to a peer rank was lost: ") +
                     message;
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
