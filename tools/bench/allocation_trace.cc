#include "tools/bench/allocation_trace.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace braid::bench {
namespace {

constexpr int64_t kFloat = 4;
constexpr int64_t kClasses = 10;
constexpr int64_t kMaxWorkspace = int64_t{32} << 20;

int64_t ImageBytes(int64_t batch, int64_t channels, int64_t hw) {
  return batch * channels * hw * hw * kFloat;
}

// A 3x3 conv's im2col buffer, capped as a convolution library caps its workspace.
size_t WorkspaceBytes(int64_t batch, int64_t in_c, int64_t out_hw) {
  return static_cast<size_t>(std::min(batch * in_c * 9 * out_hw * out_hw * kFloat, kMaxWorkspace));
}

}  // namespace

ResNetLikeTrace::ResNetLikeTrace() {
  const int64_t widths[] = {64, 128, 256, 512};
  const int64_t sizes[] = {32, 16, 8, 4};
  convs_.push_back({3, 64, 32, 32, false});  // the stem
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < 2; ++block) {
      const bool down = block == 0 && stage > 0;
      const int64_t in_c = down ? widths[stage - 1] : widths[stage];
      const int64_t in_hw = down ? sizes[stage - 1] : sizes[stage];
      convs_.push_back({in_c, widths[stage], in_hw, sizes[stage], false});
      convs_.push_back({widths[stage], widths[stage], sizes[stage], sizes[stage], true});
    }
  }
}

int64_t ResNetLikeTrace::Allocate(size_t bytes) {
  const int64_t id = next_id_++;
  ops_.push_back({TraceOp::kAllocate, id, bytes});
  live_[id] = bytes;
  return id;
}

void ResNetLikeTrace::Free(int64_t id) {
  auto it = live_.find(id);
  // Invariant: the synthetic trace frees each block once.
  CHECK(it != live_.end()) << "trace frees block " << id << " twice";
  ops_.push_back({TraceOp::kFree, id, it->second});
  live_.erase(it);
}

std::vector<TraceOp> ResNetLikeTrace::Take() { return std::exchange(ops_, {}); }

std::vector<TraceOp> ResNetLikeTrace::Setup() {
  for (const Conv& c : convs_) {
    const auto weight = static_cast<size_t>(c.in_c * c.out_c * 9 * kFloat);
    persistent_.push_back(Allocate(weight));
    persistent_.push_back(Allocate(static_cast<size_t>(c.out_c * kFloat)));  // gamma
    persistent_.push_back(Allocate(static_cast<size_t>(c.out_c * kFloat)));  // beta
    persistent_.push_back(Allocate(weight));                                 // momentum
  }
  return Take();
}

std::vector<TraceOp> ResNetLikeTrace::Teardown() {
  for (int64_t id : persistent_) Free(id);
  persistent_.clear();
  return Take();
}

std::vector<TraceOp> ResNetLikeTrace::Phase(int batch, int steps) {
  const auto input_bytes = static_cast<size_t>(ImageBytes(batch, 3, 32));
  int64_t input = Allocate(input_bytes);
  for (int step = 0; step < steps; ++step) {
    const Forward f = ForwardPass(batch);
    const int64_t next_input = step + 1 < steps ? Allocate(input_bytes) : -1;  // prefetched
    ops_.push_back({TraceOp::kMidStep, -1, 0});
    OptimizerStep(BackwardPass(batch, f));
    Free(input);
    input = next_input;
  }
  return Take();
}

ResNetLikeTrace::Forward ResNetLikeTrace::ForwardPass(int64_t batch) {
  Forward f;
  for (const Conv& c : convs_) {
    const int64_t workspace = Allocate(WorkspaceBytes(batch, c.in_c, c.out_hw));
    const auto act_bytes = static_cast<size_t>(ImageBytes(batch, c.out_c, c.out_hw));
    f.act.push_back(Allocate(act_bytes));
    f.mean.push_back(Allocate(static_cast<size_t>(c.out_c * kFloat)));
    f.inv_std.push_back(Allocate(static_cast<size_t>(c.out_c * kFloat)));
    Free(workspace);
    f.sum.push_back(c.block_end ? Allocate(act_bytes) : -1);
  }
  f.logits = Allocate(static_cast<size_t>(batch * kClasses * kFloat));
  f.loss = Allocate(kFloat);
  return f;
}

std::vector<int64_t> ResNetLikeTrace::BackwardPass(int64_t batch, const Forward& f) {
  const int64_t grad_logits = Allocate(static_cast<size_t>(batch * kClasses * kFloat));
  Free(f.logits);
  const Conv& last = convs_.back();
  int64_t grad_out = Allocate(static_cast<size_t>(ImageBytes(batch, last.out_c, last.out_hw)));
  Free(grad_logits);
  std::vector<int64_t> weight_grads(convs_.size());
  for (size_t i = convs_.size(); i-- > 0;) {
    const Conv& c = convs_[i];
    const int64_t workspace = Allocate(WorkspaceBytes(batch, c.in_c, c.out_hw));
    weight_grads[i] = Allocate(static_cast<size_t>(c.in_c * c.out_c * 9 * kFloat));
    const int64_t grad_in =
        i > 0 ? Allocate(static_cast<size_t>(ImageBytes(batch, c.in_c, c.in_hw))) : -1;
    Free(workspace);
    Free(grad_out);
    if (f.sum[i] >= 0) Free(f.sum[i]);
    Free(f.act[i]);
    Free(f.inv_std[i]);
    Free(f.mean[i]);
    grad_out = grad_in;
  }
  Free(f.loss);
  return weight_grads;
}

void ResNetLikeTrace::OptimizerStep(const std::vector<int64_t>& weight_grads) {
  for (int64_t grad : weight_grads) {
    const int64_t update = Allocate(live_.at(grad));
    Free(update);
    Free(grad);
  }
}

PhaseResult TraceReplayer::Run(const std::vector<TraceOp>& ops) {
  PhaseResult r;
  int64_t peak = in_use_;
  const auto start = std::chrono::steady_clock::now();
  for (const TraceOp& op : ops) {
    if (op.kind == TraceOp::kAllocate) {
      if (static_cast<size_t>(op.id) >= blocks_.size()) blocks_.resize(op.id + 1, nullptr);
      blocks_[op.id] = allocator_->Allocate(op.bytes);
      ++r.allocations;
      in_use_ += static_cast<int64_t>(op.bytes);
      peak = std::max(peak, in_use_);
    } else if (op.kind == TraceOp::kFree) {
      allocator_->Free(std::exchange(blocks_[op.id], nullptr), op.bytes);
      in_use_ -= static_cast<int64_t>(op.bytes);
    } else {
      r.mid_step = allocator_->stats();
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.peak_in_use = peak;
  r.end = allocator_->stats();
  return r;
}

}  // namespace braid::bench
