#include "ops/data/pixel_normalisation.h"

#include <string>

#include "braid/status.h"

namespace braid {

PixelNormalisation::PixelNormalisation(float mean, float std) {
  if (!(std > 0)) {
    throw Error(Status::InvalidArgument("std must be positive, got " + std::to_string(std)));
  }
  for (int v = 0; v < 256; ++v) table_[v] = (v / 255.f - mean) / std;
}

}  // namespace braid
