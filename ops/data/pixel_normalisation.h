// PixelNormalisation: uint8 pixels to the float32 values braid's image readers serve,
// (pixel / 255 - mean) / std, computed once per pixel value, so that every reader (IdxImageInput,
// TensorProtosDBInput) gives the same bits for the same pixels.
//
//   PixelNormalisation normalise(0.286f, 0.353f);
//   normalise.Apply(pixels, n, out);   // out[i] = (pixels[i] / 255.f - 0.286f) / 0.353f
//
// Throws braid::Error (InvalidArgument) for a std that is not positive. Thread safety: a value,
// read-only after construction.
#ifndef BRAID_OPS_DATA_PIXEL_NORMALISATION_H_
#define BRAID_OPS_DATA_PIXEL_NORMALISATION_H_

#include <array>
#include <cstdint>

namespace braid {

class PixelNormalisation {
 public:
  PixelNormalisation(float mean, float std);
  void Apply(const uint8_t* pixels, int64_t n, float* out) const {
    for (int64_t i = 0; i < n; ++i) out[i] = table_[pixels[i]];
  }

 private:
  std::array<float, 256> table_;
};

}  // namespace braid

#endif  // BRAID_OPS_DATA_PIXEL_NORMALISATION_H_
