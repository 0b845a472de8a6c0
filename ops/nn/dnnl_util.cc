#include "ops/nn/dnnl_util.h"

#include <glog/logging.h>

#include <bit>

#include "runtime/status.h"

namespace braid {

const dnnl::engine& Engine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

dnnl::memory::dims ToDnnlDims(const std::vector<int64_t>& dims) {
  return dnnl::memory::dims(dims.begin(), dims.end());
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void* ScratchBuffer::Reserve(size_t bytes) {
  if (bytes > capacity_) {
    constexpr size_t kAlign = 64;
    const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    data_.reset(std::aligned_alloc(kAlign, rounded));
    CHECK(data_ != nullptr) << "out of memory reserving " << rounded << " bytes";
    capacity_ = rounded;
  }
  return data_.get();
}

dnnl::memory MemoryOf(const dnnl::memory::desc& md, const void* data) {
  // oneDNN takes a non-const handle for inputs too; it never writes an input.
  return dnnl::memory(md, Engine(), const_cast<void*>(data));
}

void Execute(const DnnlPrimitive& p, std::unordered_map<int, dnnl::memory> args,
             ScratchBuffer* scratch) {
  const size_t scratch_bytes = p.scratchpad.get_size();
  if (scratch_bytes > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD, MemoryOf(p.scratchpad, scratch->Reserve(scratch_bytes)));
  }
  dnnl::stream& stream = ThreadStream();
  p.primitive.execute(stream, args);
  stream.wait();
}

LayoutBridge::LayoutBridge(const dnnl::memory::desc& plain, const dnnl::memory::desc& wanted,
                           bool to_primitive)
    : plain_(plain), wanted_(wanted) {
  if (plain == wanted) return;
  const dnnl::memory::desc& from = to_primitive ? plain : wanted;
  const dnnl::memory::desc& to = to_primitive ? wanted : plain;
  reorder_ = DnnlPrimitive::Of<dnnl::reorder>(
      dnnl::reorder::primitive_desc(Engine(), from, Engine(), to, UserScratchpadAttr()));
}

dnnl::memory LayoutBridge::Input(const void* data, ScratchBuffer* buffer,
                                 ScratchBuffer* scratch) const {
  dnnl::memory user = MemoryOf(plain_, data);
  if (!reorders()) return user;
  dnnl::memory reordered = MemoryOf(wanted_, buffer->Reserve(wanted_.get_size()));
  Execute(reorder_, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, reordered}}, scratch);
  return reordered;
}

dnnl::memory LayoutBridge::Output(void* data, ScratchBuffer* buffer) const {
  if (!reorders()) return MemoryOf(plain_, data);
  return MemoryOf(wanted_, buffer->Reserve(wanted_.get_size()));
}

void LayoutBridge::Finish(const dnnl::memory& written, void* data, ScratchBuffer* scratch) const {
  if (!reorders()) return;
  Execute(reorder_, {{DNNL_ARG_FROM, written}, {DNNL_ARG_TO, MemoryOf(plain_, data)}}, scratch);
}

CacheKey& CacheKey::Add(int64_t value) {
  key_ += "|" + std::to_string(value);
  return *this;
}

CacheKey& CacheKey::Add(const std::vector<int64_t>& values) {
  key_ += "|";
  for (size_t i = 0; i < values.size(); ++i) key_ += (i ? "," : "") + std::to_string(values[i]);
  return *this;
}

CacheKey& CacheKey::Add(const std::string& value) {
  key_ += "|" + value;
  return *this;
}

CacheKey& CacheKey::AddFloat(float value) {
  return Add(static_cast<int64_t>(std::bit_cast<uint32_t>(value)));
}

PrimitiveCache& PrimitiveCache::Global() {
  static PrimitiveCache* cache = new PrimitiveCache();
  return *cache;
}

size_t PrimitiveCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plans_.size();
}

void PrimitiveCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  plans_.clear();
}

std::shared_ptr<const void> PrimitiveCache::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(key);
  return it == plans_.end() ? nullptr : it->second;
}

std::shared_ptr<const void> PrimitiveCache::Insert(const std::string& key,
                                                   std::shared_ptr<const void> plan) {
  std::lock_guard<std::mutex> lock(mu_);
  if (plans_.size() >= kCapacity && plans_.count(key) == 0) plans_.clear();
  return plans_.emplace(key, std::move(plan)).first->second;
}

void ThrowDnnlError(const dnnl::error& e, const std::string& what) {
  throw Error(Status::InvalidArgument("oneDNN cannot build " + what + ": " + e.what() +
                                      " (status " + std::to_string(static_cast<int>(e.status)) +
                                      ")"));
}

}  // namespace braid
