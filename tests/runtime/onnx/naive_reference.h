// Naive loops that compute what the ONNX ops of the importer's tests compute, independently of
// braid's kernels: NCHW tensors as flat float vectors with their dims.
#ifndef BRAID_TESTS_RUNTIME_ONNX_NAIVE_REFERENCE_H_
#define BRAID_TESTS_RUNTIME_ONNX_NAIVE_REFERENCE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace braid::test {

struct Nchw {
  int64_t n, c, h, w;
  std::vector<float> v;
  float at(int64_t i, int64_t j, int64_t y, int64_t x) const { return v[((i * c + j) * h + y) * w + x]; }
};

// Zero-padded convolution, filter [M, C, kh, kw], stride s, pads t/l/b/r.
inline Nchw NaiveConv(const Nchw& x, const std::vector<float>& filter, int64_t m, int64_t kh,
                      int64_t kw, const std::vector<float>& bias, int64_t s, int64_t t, int64_t l,
                      int64_t b, int64_t r) {
  Nchw y{x.n, m, (x.h + t + b - kh) / s + 1, (x.w + l + r - kw) / s + 1, {}};
  y.v.assign(y.n * y.c * y.h * y.w, 0.f);
  for (int64_t i = 0; i < y.n; ++i)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t oy = 0; oy < y.h; ++oy)
        for (int64_t ox = 0; ox < y.w; ++ox) {
          double sum = bias.empty() ? 0 : bias[o];
          for (int64_t j = 0; j < x.c; ++j)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = oy * s + ky - t, ix = ox * s + kx - l;
                if (iy < 0 || iy >= x.h || ix < 0 || ix >= x.w) continue;
                sum += x.at(i, j, iy, ix) * filter[((o * x.c + j) * kh + ky) * kw + kx];
              }
          y.v[((i * m + o) * y.h + oy) * y.w + ox] = static_cast<float>(sum);
        }
  return y;
}

// Max or average pooling; `out_h`/`out_w` given (ceil or floor rounding decided by the caller).
// Average: divided by the window's cells inside [-t, h+b) x [-l, w+r) when include_pad, else by
// those inside the image.
inline Nchw NaivePool(const Nchw& x, bool max, int64_t k, int64_t s, int64_t t, int64_t l,
                      int64_t b, int64_t r, int64_t out_h, int64_t out_w, bool include_pad) {
  Nchw y{x.n, x.c, out_h, out_w, {}};
  for (int64_t i = 0; i < x.n; ++i)
    for (int64_t j = 0; j < x.c; ++j)
      for (int64_t oy = 0; oy < out_h; ++oy)
        for (int64_t ox = 0; ox < out_w; ++ox) {
          double acc = max ? -std::numeric_limits<double>::infinity() : 0;
          int64_t inside = 0, padded = 0;
          for (int64_t ky = 0; ky < k; ++ky)
            for (int64_t kx = 0; kx < k; ++kx) {
              const int64_t iy = oy * s + ky - t, ix = ox * s + kx - l;
              if (iy < x.h + b && ix < x.w + r) ++padded;
              if (iy < 0 || iy >= x.h || ix < 0 || ix >= x.w) continue;
              ++inside;
              acc = max ? std::max<double>(acc, x.at(i, j, iy, ix)) : acc + x.at(i, j, iy, ix);
            }
          if (!max) acc /= include_pad ? padded : inside;
          y.v.push_back(static_cast<float>(acc));
        }
  return y;
}

inline void NaiveBatchNorm(Nchw* x, const std::vector<float>& scale, const std::vector<float>& bias,
                           const std::vector<float>& mean, const std::vector<float>& var,
                           float epsilon) {
  for (int64_t i = 0; i < x->n; ++i)
    for (int64_t j = 0; j < x->c; ++j)
      for (int64_t p = 0; p < x->h * x->w; ++p) {
        float& v = x->v[(i * x->c + j) * x->h * x->w + p];
        v = scale[j] * (v - mean[j]) / std::sqrt(var[j] + epsilon) + bias[j];
      }
}

// Y [M, N] = X [M, K] * W^T (W [N, K]) + bias [N].
inline std::vector<float> NaiveFc(const std::vector<float>& x, int64_t m, int64_t k,
                                  const std::vector<float>& w, int64_t n,
                                  const std::vector<float>& bias) {
  std::vector<float> y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t o = 0; o < n; ++o) {
      double sum = bias[o];
      for (int64_t p = 0; p < k; ++p) sum += x[i * k + p] * w[o * k + p];
      y[i * n + o] = static_cast<float>(sum);
    }
  return y;
}

inline std::vector<float> NaiveSoftmaxRows(std::vector<float> x, int64_t cols) {
  for (size_t row = 0; row < x.size() / cols; ++row) {
    float* v = x.data() + row * cols;
    const float top = *std::max_element(v, v + cols);
    double sum = 0;
    for (int64_t i = 0; i < cols; ++i) sum += std::exp(v[i] - top);
    for (int64_t i = 0; i < cols; ++i) v[i] = static_cast<float>(std::exp(v[i] - top) / sum);
  }
  return x;
}

}  // namespace braid::test

#endif  // BRAID_TESTS_RUNTIME_ONNX_NAIVE_REFERENCE_H_
