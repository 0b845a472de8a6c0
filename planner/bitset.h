// Bitset: a fixed-size set of small integers, stored as 64-bit words.
//
// The planner's relations (happens-before between ops, precedence between blobs) are rows of these:
// one row per element, set operations word by word.
//
//   Bitset after(n);  after.Set(3);  if (writes.IsSubsetOf(after)) ...
//
// Not synchronised; a const Bitset may be read from many threads.
#ifndef BRAID_PLANNER_BITSET_H_
#define BRAID_PLANNER_BITSET_H_

#include <cstdint>
#include <vector>

namespace braid {

class Bitset {
 public:
  explicit Bitset(int size = 0) : words_((size + 63) / 64, 0), size_(size) {}

  int size() const { return size_; }
  bool Test(int i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  void Set(int i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  void Reset(int i) { words_[i >> 6] &= ~(uint64_t{1} << (i & 63)); }
  // Sets every element in [0, size()).
  void SetAll();
  void OrWith(const Bitset& other);
  void AndWith(const Bitset& other);
  void AndNot(const Bitset& other);  // removes other's elements
  bool IsSubsetOf(const Bitset& other) const;
  int Count() const;

 private:
  std::vector<uint64_t> words_;
  int size_;
};

}  // namespace braid

#endif  // BRAID_PLANNER_BITSET_H_
