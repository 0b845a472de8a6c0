#include "runtime/device/caching_allocator.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "runtime/device/device_lock.h"

namespace braid {

// A piece of a segment (one raw allocation): blocks of a segment tile it in address order.
struct CachingAllocator::Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested = 0;  // while allocated
  int stream = 0;
  bool small = false;
  bool allocated = false;
  bool own_segment = false;  // while allocated: its segment was made for it, and it spans it
  Block* prev = nullptr;  // neighbours within the segment
  Block* next = nullptr;
  std::vector<Stream*> used_on;  // other streams recorded while allocated
};

bool CachingAllocator::BlockOrder::operator()(const Block* a, const Block* b) const {
  return std::tie(a->stream, a->size, a->ptr) < std::tie(b->stream, b->size, b->ptr);
}

CachingAllocator::Pool& CachingAllocator::PoolOf(const Block* b) {
  return b->small ? small_free_ : large_free_;
}

CachingAllocator::CachingAllocator(DeviceContext* device)
    : device_(device), reserve_bytes_(-1) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  for (PendingFree& p : pending_) {
    for (const std::unique_ptr<Event>& e : p.events) e->HostWait();
  }
  ProcessPendingFrees();
  ReleaseCacheLocked();
  if (!allocated_.empty()) {  // the owner's bug; its segments stay (their memory may be in use)
    LOG(WARNING) << device_->device().ToString() << ": a caching allocator destroyed with "
                 << allocated_.size() << " live blocks";
  }
  for (Pool* pool : {&small_free_, &large_free_}) {
    for (Block* b : *pool) delete b;  // pieces of segments that stay
  }
  for (auto& [ptr, b] : allocated_) delete b;
}

size_t CachingAllocator::RoundedSize(size_t bytes) {
  if (bytes <= kSmallRequest) return std::max<size_t>(1, (bytes + kRoundSmall - 1) / kRoundSmall) * kRoundSmall;
  return (bytes + kSegment - 1) / kSegment * kSegment;
}

int CachingAllocator::StreamOfCaller() const {
  Stream* s = AllocationStream();
  return s != nullptr && s->device() == device_->device() ? s->index() : 0;
}

void* CachingAllocator::Allocate(size_t bytes) {
  const size_t size = RoundedSize(bytes);
  const bool small = bytes <= kSmallRequest;
  const int stream = StreamOfCaller();
  std::lock_guard<std::mutex> lock(mu_);
  ProcessPendingFrees();
  Block* b = BestFit(small ? small_free_ : large_free_, stream, size);
  const bool new_segment = b == nullptr;
  if (new_segment) b = NewSegment(small ? kSegment : size, small, stream, bytes);
  b = Split(b, size);
  b->own_segment = new_segment && b->next == nullptr;
  b->allocated = true;
  b->requested = bytes;
  allocated_[b->ptr] = b;
  ++stats_.allocations;
  stats_.bytes_in_use += static_cast<int64_t>(bytes);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return b->ptr;
}

CachingAllocator::Block* CachingAllocator::BestFit(Pool& pool, int stream, size_t size) {
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool.erase(it);
  return b;
}

CachingAllocator::Block* CachingAllocator::NewSegment(size_t size, bool small, int stream,
                                                      size_t request) {
  const int64_t free = device_->free_bytes();
  if (free >= 0 && free - static_cast<int64_t>(size) < reserve_bytes()) ReleaseCacheLocked();
  char* ptr = static_cast<char*>(RawAllocateWithRetry(size, request));  // may throw
  auto* b = new Block;
  b->ptr = ptr;
  b->size = size;
  b->small = small;
  b->stream = stream;
  stats_.bytes_reserved += static_cast<int64_t>(size);
  stats_.peak_bytes_reserved = std::max(stats_.peak_bytes_reserved, stats_.bytes_reserved);
  return b;
}

void* CachingAllocator::RawAllocateWithRetry(size_t size, size_t request) {
  for (int attempt = 0;; ++attempt) {
    try {
      std::unique_lock<std::mutex> device_lock = LockDevice(device_->device());
      void* ptr = device_->RawAllocate(size);
      ++stats_.raw_allocations;
      return ptr;
    } catch (const Error& e) {
      if (e.status().code() != StatusCode::kResourceExhausted) throw;
      if (attempt == 1) throw Error(OutOfMemory(request, size, e.status()));
      VLOG(1) << device_->device().ToString() << ": raw allocation of " << HumanBytes(size)
              << " failed; releasing the cache (" << HumanBytes(CachedBytesLocked())
              << ") and retrying once";
      ReleaseCacheLocked();
    }
  }
}

CachingAllocator::Block* CachingAllocator::Split(Block* b, size_t size) {
  const size_t rest = b->size - size;
  if (rest == 0 || (b->small && rest < kRoundSmall) || (!b->small && rest < kSegment)) return b;
  auto* tail = new Block;
  tail->ptr = b->ptr + size;
  tail->size = rest;
  tail->stream = b->stream;
  tail->small = b->small;
  tail->prev = b;
  tail->next = b->next;
  if (b->next != nullptr) b->next->prev = tail;
  b->next = tail;
  b->size = size;
  PoolOf(tail).insert(tail);
  return b;
}

CachingAllocator::Block* CachingAllocator::TakeAllocated(void* ptr, size_t bytes) {
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    ++stats_.invalid_frees;
    LOG(ERROR) << device_->device().ToString() << ": Free(" << ptr << ", " << bytes
               << ") of memory that is not live here (never given out, or freed already); ignored";
    return nullptr;
  }
  Block* b = it->second;
  if (b->requested != bytes) {
    ++stats_.invalid_frees;
    LOG(ERROR) << device_->device().ToString() << ": Free(" << ptr << ", " << bytes
               << ") of a block allocated with " << b->requested
               << " bytes; freed with its allocated size (pass Allocate's size to Free)";
  }
  allocated_.erase(it);
  b->allocated = false;
  ++stats_.frees;
  stats_.bytes_in_use -= static_cast<int64_t>(b->requested);
  return b;
}

void CachingAllocator::Free(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  Block* b = TakeAllocated(ptr, bytes);
  if (b == nullptr) return;
  if (b->used_on.empty()) {
    FreeBlock(b);
    return;
  }
  PendingFree pending{b, {}};
  for (Stream* s : b->used_on) {
    pending.events.push_back(device_->CreateEvent("reuse of a block recorded on stream " +
                                                  std::to_string(s->index())));
    s->Record(pending.events.back().get());
  }
  b->used_on.clear();
  pending_.push_back(std::move(pending));
}

void CachingAllocator::FreeAndRelease(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = allocated_.find(ptr);
    if (it != allocated_.end() && it->second->own_segment && it->second->used_on.empty()) {
      ReleaseSegmentLocked(TakeAllocated(ptr, bytes));
      return;
    }
  }
  Free(ptr, bytes);  // served from the cache, recorded on other streams, or unknown (reported)
}

void CachingAllocator::FreeBlock(Block* b) {
  Pool& pool = PoolOf(b);
  for (Block* n : {b->prev, b->next}) {
    if (n == nullptr || n->allocated || pool.count(n) == 0) continue;  // live or pending
    pool.erase(n);
    if (n == b->prev) {
      n->size += b->size;
      n->next = b->next;
      if (b->next != nullptr) b->next->prev = n;
      delete b;
      b = n;
    } else {
      b->size += n->size;
      b->next = n->next;
      if (n->next != nullptr) n->next->prev = b;
      delete n;
    }
  }
  pool.insert(b);
}

void CachingAllocator::ProcessPendingFrees() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    const bool done = std::all_of(it->events.begin(), it->events.end(),
                                  [](const std::unique_ptr<Event>& e) { return e->Query(); });
    if (!done) {
      ++it;
      continue;
    }
    FreeBlock(it->block);
    it = pending_.erase(it);
  }
}

void CachingAllocator::RecordStream(void* ptr, Stream* stream) {
  if (stream->device() != device_->device()) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) return;  // a view into a block (an arena's blob): recorded there
  Block* b = it->second;
  if (stream->index() == b->stream) return;
  if (std::find(b->used_on.begin(), b->used_on.end(), stream) == b->used_on.end()) {
    b->used_on.push_back(stream);
  }
}

void CachingAllocator::ReleaseCache() {
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseCacheLocked();
}

void CachingAllocator::ReleaseCacheLocked() {
  ProcessPendingFrees();
  for (Pool* pool : {&small_free_, &large_free_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->prev != nullptr || b->next != nullptr) {  // part of a segment still in use
        ++it;
        continue;
      }
      it = pool->erase(it);
      ReleaseSegmentLocked(b);
    }
  }
}

void CachingAllocator::ReleaseSegmentLocked(Block* segment) {
  {
    std::unique_lock<std::mutex> device_lock = LockDevice(device_->device());
    device_->RawFree(segment->ptr, segment->size);
  }
  ++stats_.raw_frees;
  stats_.bytes_reserved -= static_cast<int64_t>(segment->size);
  delete segment;
}

int64_t CachingAllocator::CachedBytesLocked() const {
  int64_t cached = 0;
  for (const Pool* pool : {&small_free_, &large_free_}) {
    for (const Block* b : *pool) cached += static_cast<int64_t>(b->size);
  }
  return cached;
}

int64_t CachingAllocator::LargestFreeLocked() const {
  int64_t largest = 0;
  for (const Pool* pool : {&small_free_, &large_free_}) {
    for (const Block* b : *pool) largest = std::max(largest, static_cast<int64_t>(b->size));
  }
  return largest;
}

void CachingAllocator::ResetPeakStats() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
  stats_.peak_bytes_reserved = stats_.bytes_reserved;
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  AllocatorStats s = stats_;
  s.cached_bytes = CachedBytesLocked();
  s.largest_free_block = LargestFreeLocked();
  return s;
}

void CachingAllocator::set_reserve_bytes(int64_t bytes) {
  reserve_bytes_.store(bytes < 0 ? -1 : bytes);
}

int64_t CachingAllocator::reserve_bytes() const {
  const int64_t set = reserve_bytes_.load();
  if (set >= 0) return set;
  const int64_t capacity = device_->capacity_bytes();  // the sim's may change (tests)
  return capacity > 0 ? static_cast<int64_t>(static_cast<double>(capacity) * kDefaultReserveFraction)
                      : 0;
}

int64_t CachingAllocator::AvailableWithoutReserve() const {
  return std::max<int64_t>(0, device_->free_bytes() - reserve_bytes());
}

Status CachingAllocator::OutOfMemory(size_t request, size_t size, const Status& cause) const {
  const int64_t cached = CachedBytesLocked();
  return Status::ResourceExhausted(
      "out of memory on " + device_->device().ToString() + ": cannot allocate " +
      std::to_string(request) + " bytes (" + HumanBytes(size) + " rounded); the device has " +
      HumanBytes(device_->capacity_bytes()) + " in total, " + HumanBytes(device_->free_bytes()) +
      " free; braid holds " + HumanBytes(stats_.bytes_in_use) + " in use and " +
      HumanBytes(cached) + " cached; largest free block " + HumanBytes(LargestFreeLocked()) +
      " (" + cause.message() + ")");
}

CachingAllocator* CachingAllocatorOf(const Device& device) {
  if (device.is_host()) return nullptr;
  return dynamic_cast<CachingAllocator*>(GetAllocator(device));
}

}  // namespace braid
