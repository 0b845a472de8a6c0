// Im2Col and Col2Im: the patches of one NCHW image under a 2-D convolution window, as the columns
// of a matrix, so that a convolution becomes a GEMM (ConvTranspose's kernels).
//
// For an image [C, H, W] and a window (kernel, stride, pad_begin, dilation of ConvPoolWindow,
// ops/nn/conv_pool_window.h) placed on a grid of grid[0] x grid[1] positions:
//   col[(c * kH + i) * kW + j][gh * grid[1] + gw] =
//       image[c][gh * stride_h - pad_t + i * dilation_h][gw * stride_w - pad_l + j * dilation_w]
// with positions outside the image reading 0 (Im2Col) or dropped (Col2Im). Col2Im is Im2Col's
// adjoint: it adds each column entry into the image element it came from (the image is not
// cleared first).
//
//   Im2Col(x, channels, {h, w}, window, window.output, col);  // col: C*kH*kW x outH*outW
//
// Pure functions over caller-owned buffers; thread-safe for disjoint outputs.
#ifndef BRAID_OPS_NN_IM2COL_H_
#define BRAID_OPS_NN_IM2COL_H_

#include <cstdint>

#include "ops/nn/conv_pool_window.h"

namespace braid {

void Im2Col(const float* image, int64_t channels, const ConvPoolWindow::Pair& image_size,
            const ConvPoolWindow& window, const ConvPoolWindow::Pair& grid, float* col);

void Col2Im(const float* col, int64_t channels, const ConvPoolWindow::Pair& image_size,
            const ConvPoolWindow& window, const ConvPoolWindow::Pair& grid, float* image);

}  // namespace braid

#endif  // BRAID_OPS_NN_IM2COL_H_
