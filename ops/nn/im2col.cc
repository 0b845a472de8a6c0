#include "ops/nn/im2col.h"

namespace braid {
namespace {

// Calls visit(image_index or -1, col_index) for every entry of the column matrix, in order.
template <typename Visit>
void ForEachPatchEntry(int64_t channels, const ConvPoolWindow::Pair& image_size,
                       const ConvPoolWindow& w, const ConvPoolWindow::Pair& grid, Visit visit) {
  const int64_t image_h = image_size[0], image_w = image_size[1];
  int64_t col = 0;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < w.kernel[0]; ++i) {
      for (int64_t j = 0; j < w.kernel[1]; ++j) {
        for (int64_t gh = 0; gh < grid[0]; ++gh) {
          const int64_t h = gh * w.stride[0] - w.pad_begin[0] + i * w.dilation[0];
          const bool row_inside = h >= 0 && h < image_h;
          for (int64_t gw = 0; gw < grid[1]; ++gw, ++col) {
            const int64_t x = gw * w.stride[1] - w.pad_begin[1] + j * w.dilation[1];
            visit(row_inside && x >= 0 && x < image_w ? (c * image_h + h) * image_w + x : -1, col);
          }
        }
      }
    }
  }
}

}  // namespace

void Im2Col(const float* image, int64_t channels, const ConvPoolWindow::Pair& image_size,
            const ConvPoolWindow& window, const ConvPoolWindow::Pair& grid, float* col) {
  ForEachPatchEntry(channels, image_size, window, grid,
                    [=](int64_t from, int64_t to) { col[to] = from >= 0 ? image[from] : 0.f; });
}

void Col2Im(const float* col, int64_t channels, const ConvPoolWindow::Pair& image_size,
            const ConvPoolWindow& window, const ConvPoolWindow::Pair& grid, float* image) {
  ForEachPatchEntry(channels, image_size, window, grid, [=](int64_t to, int64_t from) {
    if (to >= 0) image[to] += col[from];
  });
}

}  // namespace braid
