// Model folders (init_net.pb, predict_net.pb, value_info.json; runtime/io/model_folder.h). The
// input holds the three files as FuzzedDataProvider splits it: value_info.json's text, then the
// init net's bytes (each a string ended by a backslash and another character; "\\" is a backslash),
// then the predict net's bytes (the rest; tests/fuzz/make_model_folder_seed.py writes seeds).
// An accepted folder's predict net is planned and built with the shapes value_info.json and the
// init net give.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "fuzz/net_checks.h"
#include "fuzz/refusal.h"
#include "fuzz/temp_folder.h"
#include "runtime/io/model_folder.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  braid::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  const std::string value_info = input.ConsumeRandomLengthString(size);
  const std::string init_net = input.ConsumeRandomLengthString(size);
  const std::string predict_net = input.ConsumeRemainingBytesAsString();
  std::filesystem::create_directories(braid::fuzz::TempPath("model"));
  braid::fuzz::WriteTemp("model/value_info.json", value_info);
  braid::fuzz::WriteTemp("model/init_net.pb", init_net);
  braid::fuzz::WriteTemp("model/predict_net.pb", predict_net);
  braid::ModelFolder model;
  if (braid::fuzz::Refused(braid::LoadModelFolder(braid::fuzz::TempPath("model"), &model))) {
    return 0;
  }
  auto known = braid::fuzz::ShapesFilledBy(model.init_net);
  for (const braid::ValueInfo& info : model.inputs) {
    known[info.name] = braid::ShapeInfo{info.dtype, info.shape, true};
  }
  braid::fuzz::PlanAndBuild(model.predict_net, known);
  return 0;
}
