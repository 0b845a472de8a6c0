#include "ops/detection/image_info.h"

#include <cmath>
#include <string>

#include "ops/common/op_checks.h"

namespace braid::detection {

void CheckImageInfoShape(const OperatorDef& def, int index, const ShapeInfo& info, int64_t rows) {
  const bool rows_ok = info.dims.size() == 2 && (rows < 0 || info.dims[0] == rows);
  if (info.dtype == DType::kFloat32 && rows_ok && info.dims[1] == 3) return;
  const std::string expected = rows < 0 ? "(N, 3)" : "(" + std::to_string(rows) + ", 3)";
  ThrowInvalidArgument(def.type() + ": im_info " + DescribeBlob(def.input(index), info) +
                       " must be float32 " + expected + ", rows [height, width, scale]");
}

std::vector<ImageInfo> ReadImageInfo(const OperatorBase& op, int index) {
  const Tensor& t = op.Input(index);
  const float* p = t.data<float>();
  std::vector<ImageInfo> images(static_cast<size_t>(t.shape()[0]));
  for (size_t i = 0; i < images.size(); ++i, p += 3) {
    images[i] = {p[0], p[1], p[2]};
    const bool ok = std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]) && p[0] > 0 &&
                    p[1] > 0 && p[2] > 0;
    if (!ok) {
      ThrowInvalidArgument(op.type() + ": im_info '" + op.def().input(index) + "' row " +
                           std::to_string(i) + " [" + std::to_string(p[0]) + ", " +
                           std::to_string(p[1]) + ", " + std::to_string(p[2]) +
                           "] must hold a finite height, width and scale, each > 0");
    }
  }
  return images;
}

}  // namespace braid::detection
