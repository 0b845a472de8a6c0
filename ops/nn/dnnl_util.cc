#include "ops/nn/dnnl_util.h"

#include <glog/logging.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>

#include "braid/status.h"
#include "runtime/core/dims_text.h"
#include "runtime/exec/scratch.h"

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

MappedBuffer::MappedBuffer(size_t bytes) : bytes_(bytes) {
  data_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data_ == MAP_FAILED) {
    throw Error(Status::ResourceExhausted("cannot map " + std::to_string(bytes) +
                                          " bytes for a temporary buffer"));
  }
}

MappedBuffer::~MappedBuffer() { munmap(data_, bytes_); }

dnnl::memory::desc TensorDesc(const std::vector<int64_t>& dims, Layout layout) {
  using Tag = dnnl::memory::format_tag;
  Tag tag = Tag::undef;
  switch (layout) {
    case Layout::kPlain: return PlainDesc(ToDnnlDims(dims));
    case Layout::kBlocked8: tag = Tag::aBcd8b; break;
    case Layout::kBlocked16: tag = Tag::aBcd16b; break;
    case Layout::kFilterBlocked8: tag = Tag::OIhw8i8o; break;
    case Layout::kFilterBlocked16: tag = Tag::OIhw16i16o; break;
  }
  if (tag == Tag::undef) throw Error(Status::Internal("TensorDesc: unknown layout"));
  return dnnl::memory::desc(ToDnnlDims(dims), dnnl::memory::data_type::f32, tag);
}

dnnl::convolution_forward::primitive_desc DirectConvolutionProbe(
    const std::vector<int64_t>& filter_dims) {
  const std::vector<int64_t>& w = filter_dims;
  const dnnl::memory::dims x{1, w[1], w[2] + 7, w[3] + 7}, y{1, w[0], 8, 8};
  return dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                      dnnl::algorithm::convolution_direct, AnyDesc(x),
                                      AnyDesc(ToDnnlDims(w)), dnnl::memory::desc(), AnyDesc(y),
                                      {1, 1}, {0, 0}, {0, 0}),
      Engine());
}

int64_t NativeChannelBlock() {
  static const int64_t block = [] {
    // The source layout of a typical ResNet layer (3x3, 64 -> 64 channels): nChw16c on AVX-512,
    // nChw8c on AVX2 and SSE4.1.
    try {
      const dnnl::memory::desc src = DirectConvolutionProbe({64, 64, 3, 3}).src_desc();
      for (const int64_t b : {16, 8}) {
        if (src == TensorDesc({1, 64, 10, 10}, BlockedLayout(b))) return b;
      }
    } catch (const dnnl::error&) {
    }
    return int64_t{0};
  }();
  return block;
}

OpSchema::LayoutPorts DnnlLayoutPorts(std::vector<int> inputs, std::vector<int> outputs) {
  return {std::move(inputs), std::move(outputs), NativeChannelBlock()};
}

dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

dnnl::memory::dims ToDnnlDims(const std::vector<int64_t>& dims) {
  return dnnl::memory::dims(dims.begin(), dims.end());
}

int64_t BatchChunk(int64_t batch, int64_t blocked_bytes_per_sample) {
  for (int64_t chunk = batch; chunk > 1; --chunk) {
    if (batch % chunk == 0 && chunk * blocked_bytes_per_sample <= kChunkScratchBytes) return chunk;
  }
  return std::min<int64_t>(batch, 1);
}

int64_t BlockedBytesPerSample(const std::vector<int64_t>& dims) {
  const int64_t block = std::max<int64_t>(NativeChannelBlock(), 1);  // the primitives' block
  int64_t bytes = static_cast<int64_t>(sizeof(float)) * ((dims[1] + block - 1) / block * block);
  for (size_t i = 2; i < dims.size(); ++i) bytes *= dims[i];
  return bytes;
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::memory ScratchLayout::Add(const dnnl::memory::desc& md) {
  regions_.emplace_back();
  regions_.back().bytes = md.get_size();
  regions_.back().buffers.push_back(MemoryOf(md));
  LayOut();
  return regions_.back().buffers.back();
}

dnnl::memory ScratchLayout::Share(const dnnl::memory& existing, const dnnl::memory::desc& md) {
  for (Region& region : regions_) {
    for (const dnnl::memory& buffer : region.buffers) {
      if (buffer != existing) continue;
      region.bytes = std::max(region.bytes, md.get_size());
      region.buffers.push_back(MemoryOf(md));
      LayOut();
      return region.buffers.back();
    }
  }
  // Invariant: ops share only buffers of the layout they made them with.
  LOG(FATAL) << "ScratchLayout::Share: the memory is not a buffer of this layout";
}

void ScratchLayout::LayOut() {
  constexpr size_t kAlign = 64;
  bytes_ = 0;
  for (Region& region : regions_) {
    region.offset = bytes_;
    bytes_ += (region.bytes + kAlign - 1) / kAlign * kAlign;
  }
  placed_at_ = nullptr;
}

void ScratchLayout::Place() {
  if (bytes_ == 0) return;
  char* base = static_cast<char*>(ThreadScratch().Reserve(bytes_));
  if (base == placed_at_) return;
  for (const Region& region : regions_) {
    for (const dnnl::memory& buffer : region.buffers) Point(buffer, base + region.offset);
  }
  placed_at_ = base;
}

dnnl::memory MemoryOf(const dnnl::memory::desc& md, const void* data) {
  // oneDNN takes a non-const handle for inputs too; it never writes an input.
  return dnnl::memory(md, Engine(), const_cast<void*>(data));
}

void Point(const dnnl::memory& m, const void* data) { m.set_data_handle(const_cast<void*>(data)); }

LayoutBridge::LayoutBridge(const dnnl::memory::desc& plain, const dnnl::memory::desc& wanted,
                           bool to_primitive)
    : plain_(plain), wanted_(wanted), to_primitive_(to_primitive) {
  if (plain == wanted) return;
  const dnnl::memory::desc& from = to_primitive ? plain : wanted;
  const dnnl::memory::desc& to = to_primitive ? wanted : plain;
  reorder_ = DnnlPrimitive::Of<dnnl::reorder>(
      dnnl::reorder::primitive_desc(Engine(), from, Engine(), to, UserScratchpadAttr()));
}

namespace {

// DnnlExecutionCounts' entries: never destroyed, so a counter outlives every primitive holding it.
struct ExecutionCounters {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<std::atomic<int64_t>>> by_name;  // guarded by mu
};

ExecutionCounters& Counters() {
  static auto* counters = new ExecutionCounters;
  return *counters;
}

}  // namespace

std::atomic<int64_t>* ExecutionCounter(const dnnl::primitive_desc_base& pd) {
  const std::string name =
      std::string(dnnl_prim_kind2str(static_cast<dnnl_primitive_kind_t>(pd.get_kind()))) + " " +
      pd.impl_info_str();
  ExecutionCounters& counters = Counters();
  std::lock_guard<std::mutex> lock(counters.mu);
  std::unique_ptr<std::atomic<int64_t>>& counter = counters.by_name[name];
  if (counter == nullptr) counter = std::make_unique<std::atomic<int64_t>>(0);
  return counter.get();
}

std::map<std::string, int64_t> DnnlExecutionCounts() {
  ExecutionCounters& counters = Counters();
  std::lock_guard<std::mutex> lock(counters.mu);
  std::map<std::string, int64_t> counts;
  for (const auto& [name, counter] : counters.by_name) {
    counts[name] = counter->load(std::memory_order_relaxed);
  }
  return counts;
}

BoundPrimitive::BoundPrimitive(const DnnlPrimitive& p, ScratchLayout* scratch)
    : primitive_(p.primitive), executions_(p.executions) {
  if (p.scratchpad.get_size() > 0) args_[DNNL_ARG_SCRATCHPAD] = scratch->Add(p.scratchpad);
}

BoundPrimitive::BoundPrimitive(const DnnlPrimitive& p, ScratchLayout* scratch,
                               const BoundPrimitive& sibling)
    : primitive_(p.primitive), executions_(p.executions) {
  if (p.scratchpad.get_size() == 0) return;
  auto it = sibling.args_.find(DNNL_ARG_SCRATCHPAD);
  args_[DNNL_ARG_SCRATCHPAD] = it == sibling.args_.end()
                                   ? scratch->Add(p.scratchpad)
                                   : scratch->Share(it->second, p.scratchpad);
}

void BoundPrimitive::Run() const {
  dnnl::stream& stream = ThreadStream();
  primitive_.execute(stream, args_);
  stream.wait();
  if (executions_ != nullptr) executions_->fetch_add(1, std::memory_order_relaxed);
}

BoundTensor::BoundTensor(const LayoutBridge& bridge, ScratchLayout* scratch)
    : BoundTensor(bridge, scratch, BoundTensor()) {}

BoundTensor::BoundTensor(const LayoutBridge& bridge, ScratchLayout* scratch,
                         const BoundTensor& sibling)
    : plain_(MemoryOf(bridge.plain())) {
  if (!bridge.reorders()) {
    at_primitive_ = plain_;
    return;
  }
  at_primitive_ = sibling.reorder_ ? scratch->Share(sibling.at_primitive_, bridge.wanted())
                                   : scratch->Add(bridge.wanted());
  reorder_ = BoundPrimitive(bridge.reorder(), scratch);
  reorder_.Bind(DNNL_ARG_FROM, bridge.to_primitive() ? plain_ : at_primitive_);
  reorder_.Bind(DNNL_ARG_TO, bridge.to_primitive() ? at_primitive_ : plain_);
}

void BoundTensor::Point(const void* data) const { braid::Point(plain_, data); }

void BoundTensor::Reorder() const {
  if (reorder_) reorder_.Run();
}

CacheKey& CacheKey::Add(int64_t value) {
  key_ += "|" + std::to_string(value);
  return *this;
}

CacheKey& CacheKey::Add(const std::vector<int64_t>& values) {
  key_ += "|" + JoinedInts(values);
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
