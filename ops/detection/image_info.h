// The `im_info` input of the Detectron ops (GenerateProposals, BBoxTransform): one row
// [height, width, scale] per image, float32 (N, 3). Height and width are the network input's size
// in pixels (the image after resizing by `scale`).
//
//   CheckImageInfoShape(def, 2, in[2], num_images);   // in shape inference
//   std::vector<ImageInfo> images = ReadImageInfo(*this, 2);   // in the kernel
//
// Errors name the op type, the blob and the row. Pure functions; thread-safe.
#ifndef BRAID_OPS_DETECTION_IMAGE_INFO_H_
#define BRAID_OPS_DETECTION_IMAGE_INFO_H_

#include <cstdint>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid::detection {

struct ImageInfo {
  float height = 0, width = 0, scale = 0;
};

// Input `index` of `def` is float32 (rows, 3); any number of rows when rows < 0.
void CheckImageInfoShape(const OperatorDef& def, int index, const ShapeInfo& info, int64_t rows);
// The rows of input `index`, each finite with height, width and scale > 0.
std::vector<ImageInfo> ReadImageInfo(const OperatorBase& op, int index);

}  // namespace braid::detection

#endif  // BRAID_OPS_DETECTION_IMAGE_INFO_H_
