// ONNX import (a serialized ModelProto), then the imported predict net is planned and built with
// the shapes of its input and of the init net's weights.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/net_checks.h"
#include "fuzz/refusal.h"
#include "runtime/io/onnx/onnx_import.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  braid::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  braid::ModelFolder model;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (braid::fuzz::Refused(braid::ImportOnnxBytes(bytes, "<fuzz>", {}, &model))) return 0;
  auto known = braid::fuzz::ShapesFilledBy(model.init_net);
  for (const braid::ValueInfo& input : model.inputs) {
    known[input.name] = braid::ShapeInfo{input.dtype, input.shape, true};
  }
  braid::fuzz::PlanAndBuild(model.predict_net, known);
  return 0;
}
