// The layout shared by Concat and Split: a whole tensor cut along one axis into pieces (Caffe2's
// semantics), and the one copy loop both ops run over it.
//
// The axis is the `axis` argument (negative counts from the end); without it, `order` "NHWC" means
// axis 3 and anything else (default "NCHW") axis 1. With `add_axis` = 1 the pieces lack that dim:
// Concat stacks them along a new dim at `axis` and Split removes it from each output.
//   pieces [2,3], [2,5], axis 1           -> whole [2,8]
//   pieces [2,3], [2,3], axis 0, add_axis -> whole [2,2,3]
//
// Viewed as [outer, extent, inner] with extent split into the pieces' sizes, piece i is the block
// [outer, sizes[i], inner] of the whole; ForEachBlock visits the contiguous runs in memory order:
//   ForEachBlock(layout, [&](int64_t whole_at, int piece, int64_t piece_at, int64_t count) {
//     std::memcpy(whole + whole_at * bytes, pieces[piece] + piece_at * bytes, count * bytes);
//   });
#ifndef BRAID_OPS_TENSOR_CONCAT_SPLIT_H_
#define BRAID_OPS_TENSOR_CONCAT_SPLIT_H_

#include <cstdint>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

struct AxisLayout {
  int axis = 0;
  bool add_axis = false;
  int64_t outer = 1;  // product of the whole's dims before axis
  int64_t inner = 1;  // product of the whole's dims after axis
  std::vector<int64_t> whole_dims;
  std::vector<int64_t> sizes;                    // each piece's extent along axis
  std::vector<std::vector<int64_t>> piece_dims;  // without the axis when add_axis
};

// Whether op `def` has `add_axis` = 1.
bool AddsAxis(const OperatorDef& def);
// The canonical axis of op `def` for a whole tensor of `whole_ndim` dims, and its add_axis flag;
// throws braid::Error when the axis is out of range.
AxisLayout ResolveConcatAxis(const OperatorDef& def, int whole_ndim);
// Fills outer, inner and piece_dims of `layout` from whole_dims and sizes (which must sum to the
// whole's extent along axis).
void CompleteLayout(AxisLayout* layout);

template <typename Fn>
void ForEachBlock(const AxisLayout& layout, Fn&& copy) {
  int64_t extent = 0;
  for (int64_t size : layout.sizes) extent += size;
  for (int64_t o = 0; o < layout.outer; ++o) {
    int64_t whole_at = o * extent * layout.inner;
    for (size_t i = 0; i < layout.sizes.size(); ++i) {
      const int64_t count = layout.sizes[i] * layout.inner;
      copy(whole_at, static_cast<int>(i), o * count, count);
      whole_at += count;
    }
  }
}

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_CONCAT_SPLIT_H_
