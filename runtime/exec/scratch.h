// Scratch memory: buffers an op needs only while it runs (oneDNN's copies of its tensors in a
// primitive's blocked layout, primitive scratchpads). Rather than each op owning its own, which
// leaves every op's buffers resident for the life of the net (several times the planned arena in
// ResNet-50 training: README, "Measurements behind the design"), ops borrow the scratch area of
// the executor worker running them: a net holds one area per worker, each as large as the largest
// op's need.
//
//   // In an op's Run: this thread's area, grown to the op's need.
//   char* base = static_cast<char*>(ThreadScratch().Reserve(bytes));
//   // In an executor: install a worker's area for the ops it runs.
//   ScratchScope scope(&areas.slot(worker));
//
// No allocation after the first run: a net grows every worker's area to the largest request any
// of them has seen after each Run (ScratchAreas::Equalize), so whichever worker runs an op later,
// its area already fits. The price: a net of W workers holds W times its largest op's scratch
// (a dag net's num_workers defaults to the hardware threads; set it lower for big models).
//
// Thread safety and ownership: a ScratchArea is used by one thread at a time (the thread holding
// the executor slot it belongs to); its contents are undefined between ops. ThreadScratch() is the
// area installed on the calling thread by a live ScratchScope, else a thread-local area of that
// thread's own (ops run outside any net). ScratchAreas belongs to one net; Equalize runs between
// the net's Runs, when no worker uses an area.
#ifndef BRAID_RUNTIME_EXEC_SCRATCH_H_
#define BRAID_RUNTIME_EXEC_SCRATCH_H_

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <vector>

namespace braid {

// A grow-only, 64-byte aligned host buffer.
class ScratchArea {
 public:
  // At least `bytes` bytes; the contents are not kept when it grows. Throws braid::Error
  // (ResourceExhausted, the area then empty) when the host has no memory for them.
  void* Reserve(size_t bytes);
  size_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data_;
  size_t capacity_ = 0;
};

// The scratch area of the calling thread (see the thread-safety notes above).
ScratchArea& ThreadScratch();

// Installs `area` as the calling thread's scratch area while it lives; restores the previous one.
class ScratchScope {
 public:
  explicit ScratchScope(ScratchArea* area);
  ~ScratchScope();
  ScratchScope(const ScratchScope&) = delete;
  ScratchScope& operator=(const ScratchScope&) = delete;

 private:
  ScratchArea* previous_;
};

// One scratch area per executor worker slot, owned by a net.
class ScratchAreas {
 public:
  explicit ScratchAreas(int slots) : areas_(slots) {}

  int size() const { return static_cast<int>(areas_.size()); }
  ScratchArea& slot(int i) { return areas_.at(i); }
  // Grows every area to the largest capacity among them. Call only while no worker runs.
  void Equalize();
  // Bytes held by all areas.
  size_t bytes() const;

 private:
  std::vector<ScratchArea> areas_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_SCRATCH_H_
