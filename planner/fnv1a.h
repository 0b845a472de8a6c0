// FNV-1a, the one non-cryptographic hash braid uses for stable names and fingerprints: the
// default seed of a random op (planner/op_seed.h), the default tag of a cross-process collective
// (runtime/exec/process_collective_order.h), the fingerprint ranks compare of their collectives
// (runtime/exec/process_collective_order.h) and braid_run's output digests (tools/output_report.h).
// It lives in planner/, the lowest folder, so that every folder may include it. The values are
// part of braid's behaviour (seeds, tags and digests must not change between versions).
//
//   Fnv1a32("a");              // 0xe40c292c
//   Fnv1a64(bytes, size);      // over raw bytes
//
// Fnv1a64FromBasis takes another offset basis: OpSeed's, 1469598103934665603 (FNV's,
// 14695981039346656037, a digit short), from which every default seed so far came, so it stays.
//
// Pure and thread-safe.
#ifndef BRAID_PLANNER_FNV1A_H_
#define BRAID_PLANNER_FNV1A_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace braid {

inline uint32_t Fnv1a32(std::string_view text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) hash = (hash ^ c) * 16777619u;
  return hash;
}

constexpr uint64_t kFnv1a64Basis = 14695981039346656037ull;

inline uint64_t Fnv1a64FromBasis(uint64_t basis, const void* data, size_t bytes) {
  uint64_t hash = basis;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

inline uint64_t Fnv1a64(const void* data, size_t bytes) {
  return Fnv1a64FromBasis(kFnv1a64Basis, data, bytes);
}

inline uint64_t Fnv1a64(std::string_view text) { return Fnv1a64(text.data(), text.size()); }

}  // namespace braid

#endif  // BRAID_PLANNER_FNV1A_H_
