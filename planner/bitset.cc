#include "planner/bitset.h"

#include <bit>
#include <cstddef>

namespace braid {

void Bitset::SetAll() {
  for (uint64_t& w : words_) w = ~uint64_t{0};
  if (size_ % 64 != 0) words_.back() = (uint64_t{1} << (size_ % 64)) - 1;
}

void Bitset::OrWith(const Bitset& other) {
  for (std::size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
}

void Bitset::AndWith(const Bitset& other) {
  for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= other.words_[i];
}

void Bitset::AndNot(const Bitset& other) {
  for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= ~other.words_[i];
}

bool Bitset::IsSubsetOf(const Bitset& other) const {
  for (std::size_t i = 0; i < words_.size(); ++i) {
    if (words_[i] & ~other.words_[i]) return false;
  }
  return true;
}

int Bitset::Count() const {
  int n = 0;
  for (uint64_t w : words_) n += std::popcount(w);
  return n;
}

}  // namespace braid
