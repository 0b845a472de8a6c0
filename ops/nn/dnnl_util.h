// oneDNN glue shared by the nn ops (Conv, pooling, SpatialBN): the CPU engine, a stream per
// thread, plain memory descriptors, a process-wide cache of plans (primitives with the layout
// bridges around them) keyed by shape and attributes, and the per-op bindings of a plan to memory.
//
//   // Prepare (a new input shape): the shared plan, then this op's binding of it.
//   plan_ = PrimitiveCache::Global().GetOrCreate<ConvForwardPlan>(
//       CacheKey("Conv").Add(x_dims).Add(w_dims).str(), [&] { return MakePlan(...); });
//   scratch_ = ScratchLayout();
//   src_ = BoundTensor(plan_->src, &scratch_);
//   conv_ = BoundPrimitive(plan_->conv, &scratch_);
//   conv_.Bind(DNNL_ARG_SRC, src_.at_primitive());
//   // Run: place the buffers in this thread's scratch area, re-point at the tensors, reorder, run.
//   scratch_.Place();
//   src_.Point(Input(0).data<float>());
//   src_.Reorder();
//   conv_.Run();
//
// Layouts. Tensors at op boundaries are plain row-major (NCHW, filters OIHW) unless a net keeps an
// activation blocked (nChw16c on AVX-512, nChw8c on AVX2: the block NativeChannelBlock() finds,
// runtime/core/tensor.h): each op reads its inputs in the layout they have and writes an output
// blocked when its blocked_outputs argument asks (runtime/models/blocked_layouts.h sets it where
// every reader takes blocked tensors). Conv lets oneDNN choose its layouts (format_tag::any:
// nChw16c / OIhw16i16o on AVX-512, nChw8c / OIhw8i8o on AVX2), batch norm runs blocked (oneDNN's
// plain-layout kernel is far slower, ops/nn/spatial_bn_op.h), and each op reorders between a
// tensor's layout and its primitive's where they differ (a LayoutBridge): one extra pass over the
// tensor, which the blocked JIT kernels more than pay back (see ops/nn/conv_op.h). With blocked
// activations a ResNet layer runs without activation reorders (what that gained: README,
// "Measurements behind the design"). Pooling is memory-bound, so a reorder would cost as much as
// the op: it runs on its input's layout.
//
// Thread safety and ownership:
//  - Engine() is created once (a function-local static) and read-only afterwards.
//  - ThreadStream() is one dnnl::stream per thread: a stream is not thread-safe.
//  - PrimitiveCache::Global() is owned by the process (never destroyed). Its map is guarded by
//    a mutex; entries are immutable once inserted and handed out as shared_ptr<const>, so a cache
//    clear never frees a plan an op still holds. Every primitive is created with
//    scratchpad_mode::user, which makes one cached primitive safe to execute from several threads
//    at once (oneDNN's guarantee), as long as each execution gets its own scratchpad.
//  - BoundPrimitive, BoundTensor and ScratchLayout are owned by one op instance, which the
//    executor runs on one thread at a time; its memory objects therefore need no lock. They are
//    made when the op meets a new input shape. The buffers they point at (scratchpads, blocked
//    copies) live in the running thread's scratch area (runtime/exec/scratch.h), which the net sizes
//    after its first run, so from the second run of a shape on a run allocates nothing. The nn
//    schemas say AllocatesLazily, so the dag executor runs a net's first iteration on one thread.
//
// Threading: the system oneDNN is built with OpenMP; a primitive fixes its thread count (the
// creating thread's omp_get_max_threads) when it is made, and its results depend on it (reductions
// split by thread). So PrimitiveCache keys hold the count: an op runs with its own budget's team
// and computes the same bits whatever ran before in the process (a key without it handed a 1-thread
// net the 2-thread primitive an earlier net had made). Nets on two executors, or two worker counts,
// agree bit for bit where their ops' budgets agree. Several ops may run at once (the dag executor,
// streams of sim devices); each op's budget follows the ops that may run beside it
// (runtime/exec/intra_op_threads.h), a fixed function of the net, so their teams do not
// oversubscribe. OpenMP's spinning threads suffer when another process holds a core, by orders of
// magnitude for a tiny op (README, "Measurements behind the design"; OMP_NUM_THREADS and
// OMP_WAIT_POLICY tune it). The elementwise ops run on the same OpenMP team
// (ops/common/parallel.h).
#ifndef BRAID_OPS_NN_DNNL_UTIL_H_
#define BRAID_OPS_NN_DNNL_UTIL_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/tensor.h"
#include "runtime/exec/intra_op_threads.h"
#include "runtime/exec/scratch.h"

namespace braid {

const dnnl::engine& Engine();
dnnl::stream& ThreadStream();

// A float32 descriptor with dense row-major strides (nchw, oihw, goihw, x...).
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims);
// The descriptor of a float32 tensor of `dims` in `layout` (runtime/core/tensor.h): PlainDesc,
// nChw8c / nChw16c for Layout::kBlocked8 / kBlocked16, OIhw8i8o / OIhw16i16o for the filters.
dnnl::memory::desc TensorDesc(const std::vector<int64_t>& dims, Layout layout);
// The direct convolution oneDNN makes on this CPU, layouts left to it, for one sample of
// [C, kH + 7, kW + 7] and a filter of `filter_dims` [M, C, kH, kW] (stride 1, no padding: neither
// changes the layouts it picks): its src_desc and weights_desc are the layouts it reads. Throws
// dnnl::error.
dnnl::convolution_forward::primitive_desc DirectConvolutionProbe(
    const std::vector<int64_t>& filter_dims);
// The channel block of this machine's oneDNN convolutions (what they choose when the layout is
// left to them): 16 on AVX-512, 8 on AVX2; 0 when they choose no blocked layout. Asked of oneDNN
// once per process (honours ONEDNN_MAX_CPU_ISA).
int64_t NativeChannelBlock();
// The layout ports of a oneDNN op: these inputs and outputs, blocked by NativeChannelBlock().
OpSchema::LayoutPorts DnnlLayoutPorts(std::vector<int> inputs, std::vector<int> outputs);
// The same dims, layout left to the primitive.
dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims);
dnnl::memory::dims ToDnnlDims(const std::vector<int64_t>& dims);

// Batch chunks. An op whose samples are independent (Conv forward, inference SpatialBN) may run
// its primitive over a few samples at a time: the blocked copies it keeps in the scratch area then
// hold one chunk, not the batch. NCHW tensors, plain or blocked, keep each sample contiguous, so
// a chunk is a pointer offset. BatchChunk is the largest divisor of `batch` whose samples' bytes fit
// kChunkScratchBytes (at least 1); Conv also shrinks the chunk while its primitive's scratchpad
// (Winograd's grows with the batch) takes it over the budget. Chunks cut the scratch and the peak
// at no cost in speed, except that smaller Winograd chunks cost some (README, "Measurements behind
// the design").
inline constexpr int64_t kChunkScratchBytes = int64_t{32} << 20;
int64_t BatchChunk(int64_t batch, int64_t blocked_bytes_per_sample);
// Bytes of an NCHW float32 tensor of `dims` per sample (dims[0]) in a channel-blocked layout:
// channels rounded up to this machine's block (NativeChannelBlock: 16 on AVX-512, 8 on AVX2).
int64_t BlockedBytesPerSample(const std::vector<int64_t>& dims);

// Attributes of every primitive made here: user-managed scratchpad (see the thread-safety notes).
dnnl::primitive_attr UserScratchpadAttr();

// Zeroed pages mapped for a temporary buffer (an algorithm search's operands, a filter being
// packed) and unmapped when it is destroyed, so that they stop being resident at once: glibc keeps
// freed blocks of a few MB in its heap. Pages never written are never made resident. Throws
// braid::Error when the pages cannot be mapped.
class MappedBuffer {
 public:
  explicit MappedBuffer(size_t bytes);
  ~MappedBuffer();
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_;
  size_t bytes_;
};

// The buffers an op needs only while it runs (its tensors' copies in a primitive's layout, the
// primitives' scratchpads), laid out in regions of one block. The op builds the layout when it
// prepares a shape; each run, Place() points every buffer into the scratch area of the thread
// running the op (runtime/exec/scratch.h), so all ops of an executor worker share one area.
//
//   dnnl::memory buffer = layout.Add(blocked_desc);         // Prepare: a region of its own
//   dnnl::memory result = layout.Share(buffer, other_desc); // the same region, grown to fit
//   layout.Place();                                         // Run: before any primitive runs
class ScratchLayout {
 public:
  // Memory on `md` in a new region.
  dnnl::memory Add(const dnnl::memory::desc& md);
  // Memory on `md` over the region of `existing` (returned by Add or Share), grown to fit: for a
  // buffer first written after `existing` is last read, or a primitive run in place.
  dnnl::memory Share(const dnnl::memory& existing, const dnnl::memory::desc& md);
  // Every region's bytes, each rounded up to 64.
  size_t bytes() const { return bytes_; }
  // Points every buffer into this thread's scratch area, grown to bytes() when needed.
  void Place();

 private:
  struct Region {
    size_t bytes = 0;
    size_t offset = 0;
    std::vector<dnnl::memory> buffers;
  };
  void LayOut();

  std::vector<Region> regions_;
  size_t bytes_ = 0;
  void* placed_at_ = nullptr;  // where the buffers point now
};

// Executions of oneDNN primitives through BoundPrimitive (every primitive an op runs, reorders
// included), by primitive kind and implementation, e.g. "convolution jit:avx2" or "reorder
// jit:uni", counted since the process started: how tests and benchmarks see which kernels a step
// ran (a "ref:" implementation is oneDNN's slow reference code) and how many reorders it made.
// Take two snapshots and subtract. Thread safety: any thread; the counts are relaxed atomics.
std::map<std::string, int64_t> DnnlExecutionCounts();

// A primitive with the scratchpad it needs per execution.
struct DnnlPrimitive {
  dnnl::primitive primitive;
  dnnl::memory::desc scratchpad;
  std::atomic<int64_t>* executions = nullptr;  // its DnnlExecutionCounts() entry

  DnnlPrimitive() = default;
  // DnnlPrimitive::Of<dnnl::convolution_forward>(pd).
  template <typename Primitive>
  static DnnlPrimitive Of(const typename Primitive::primitive_desc& pd);
  explicit operator bool() const { return static_cast<bool>(primitive); }
};

// A memory object on `md` at `data` (not owned; may be null until set_data_handle).
dnnl::memory MemoryOf(const dnnl::memory::desc& md, const void* data = nullptr);
// Re-points `m` at `data` (oneDNN never writes through a primitive's inputs).
void Point(const dnnl::memory& m, const void* data);

// Between a tensor's layout (plain or blocked) and the layout a primitive wants; an identity when
// they agree.
// Immutable after construction, so one bridge in a cached plan serves every op and thread.
class LayoutBridge {
 public:
  LayoutBridge() = default;
  // `plain`: the tensor's layout (named for the usual case). `to_primitive`: an input
  // (plain -> wanted); otherwise an output (wanted -> plain).
  LayoutBridge(const dnnl::memory::desc& plain, const dnnl::memory::desc& wanted,
               bool to_primitive);

  bool reorders() const { return static_cast<bool>(reorder_); }
  bool to_primitive() const { return to_primitive_; }
  const dnnl::memory::desc& wanted() const { return wanted_; }
  const dnnl::memory::desc& plain() const { return plain_; }
  const DnnlPrimitive& reorder() const { return reorder_; }

 private:
  dnnl::memory::desc plain_, wanted_;
  bool to_primitive_ = true;
  DnnlPrimitive reorder_;
};

// A cached primitive bound to one op: its arguments are memory objects made once (when the op
// prepares a shape), which the op re-points at its tensors on every run (set_data_handle), so a
// run allocates nothing. The scratchpad is a region of the op's ScratchLayout.
//
//   BoundPrimitive conv(plan.conv, &scratch);
//   conv.Bind(DNNL_ARG_SRC, src_memory);   // a handle: re-pointing src_memory later is seen
//   conv.Run();
class BoundPrimitive {
 public:
  BoundPrimitive() = default;
  BoundPrimitive(const DnnlPrimitive& p, ScratchLayout* scratch);
  // With the scratchpad in the region of `sibling`'s, for primitives an op runs one after the
  // other.
  BoundPrimitive(const DnnlPrimitive& p, ScratchLayout* scratch, const BoundPrimitive& sibling);

  void Bind(int arg, const dnnl::memory& m) { args_[arg] = m; }
  // Executes on this thread's stream and waits for it.
  void Run() const;
  explicit operator bool() const { return static_cast<bool>(primitive_); }

 private:
  dnnl::primitive primitive_;
  std::atomic<int64_t>* executions_ = nullptr;
  std::unordered_map<int, dnnl::memory> args_;
};

// One tensor of an op at a primitive (a LayoutBridge bound to the op): memory on the tensor's
// layout and, when the primitive wants another layout, a buffer in that layout (a region of the
// op's ScratchLayout) with the reorder between the two.
//
//   BoundTensor src(plan.src, &scratch);   // Prepare
//   conv.Bind(DNNL_ARG_SRC, src.at_primitive());   // once
//   src.Point(x.any_layout_data<float>());   // every run
//   src.Reorder();                // into the buffer, if the layouts differ
class BoundTensor {
 public:
  BoundTensor() = default;
  BoundTensor(const LayoutBridge& bridge, ScratchLayout* scratch);
  // As above, but when both reorder, this tensor's primitive-side buffer shares `sibling`'s
  // region: for a primitive run in place, or a tensor written only after `sibling`'s buffer is
  // no longer read. One buffer less per op.
  BoundTensor(const LayoutBridge& bridge, ScratchLayout* scratch, const BoundTensor& sibling);

  // Re-points the plain memory at the tensor's data.
  void Point(const void* data) const;
  // The memory the primitive reads or writes.
  const dnnl::memory& at_primitive() const { return at_primitive_; }
  // For an input: reorders plain -> wanted. For an output: wanted -> plain. Nothing when the
  // layouts agree.
  void Reorder() const;

 private:
  dnnl::memory plain_, at_primitive_;
  BoundPrimitive reorder_;
};

// Builds cache keys from an op kind, dims and attributes: "Conv|1,3,8,8|0,1|...".
class CacheKey {
 public:
  explicit CacheKey(std::string kind) : key_(std::move(kind)) {}
  CacheKey& Add(int64_t value);
  CacheKey& Add(const std::vector<int64_t>& values);
  CacheKey& Add(const std::string& value);
  CacheKey& Add(Layout layout) { return Add(static_cast<int64_t>(layout)); }
  // Exact (bit pattern), so that nearby values such as epsilons never share a key.
  CacheKey& AddFloat(float value);
  const std::string& str() const { return key_; }

 private:
  std::string key_;
};

// Process-wide cache of immutable plans (primitives with their layout bridges) by key. When it
// holds kCapacity plans it is emptied before the next insert (plans held by ops stay alive). Two
// threads missing the same key may both build a plan; the first insert wins and both use it.
class PrimitiveCache {
 public:
  static constexpr size_t kCapacity = 1024;
  static PrimitiveCache& Global();

  // The plan for `key` and the calling thread's OpenMP team (IntraOpThreads), built with `make` on
  // a miss (outside the lock: building JITs code).
  template <typename Plan>
  std::shared_ptr<const Plan> GetOrCreate(const std::string& key,
                                          const std::function<Plan()>& make);
  size_t size() const;
  void Clear();

 private:
  std::shared_ptr<const void> Find(const std::string& key) const;
  std::shared_ptr<const void> Insert(const std::string& key, std::shared_ptr<const void> plan);

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const void>> plans_;  // guarded by mu_
};

// Rethrows a oneDNN error as braid::Error (InvalidArgument) naming what was being built.
[[noreturn]] void ThrowDnnlError(const dnnl::error& e, const std::string& what);

// The DnnlExecutionCounts() entry of primitives of `pd`'s kind and implementation.
std::atomic<int64_t>* ExecutionCounter(const dnnl::primitive_desc_base& pd);

template <typename Primitive>
DnnlPrimitive DnnlPrimitive::Of(const typename Primitive::primitive_desc& pd) {
  DnnlPrimitive p;
  p.primitive = Primitive(pd);
  p.scratchpad = pd.scratchpad_desc();
  p.executions = ExecutionCounter(pd);
  return p;
}

template <typename Plan>
std::shared_ptr<const Plan> PrimitiveCache::GetOrCreate(const std::string& key,
                                                        const std::function<Plan()>& make) {
  const std::string typed_key =
      key + "|" + typeid(Plan).name() + "|threads " + std::to_string(IntraOpThreads());
  if (std::shared_ptr<const void> found = Find(typed_key)) {
    return std::static_pointer_cast<const Plan>(found);
  }
  auto plan = std::make_shared<const Plan>(make());
  return std::static_pointer_cast<const Plan>(Insert(typed_key, plan));
}

}  // namespace braid

#endif  // BRAID_OPS_NN_DNNL_UTIL_H_
