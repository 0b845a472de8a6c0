// Checkpoint loading (the bytes as a binary and as a text TensorProtos file) into a workspace of
// three blobs. A checkpoint is all or nothing: a refused file leaves every blob as it was, and an
// accepted one never changes a blob's type or shape.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "braid/status.h"
#include "fuzz/net_checks.h"
#include "fuzz/temp_folder.h"
#include "runtime/core/workspace.h"
#include "runtime/io/checkpoint.h"

namespace {

const std::vector<std::string> kBlobs = {"w", "b", "step"};

void Fill(braid::Workspace* ws) {
  braid::Tensor* w = ws->CreateBlob("w");
  w->Resize(braid::DType::kFloat32, {2, 3});
  for (int64_t i = 0; i < w->numel(); ++i) w->mutable_data<float>()[i] = static_cast<float>(i);
  braid::Tensor* b = ws->CreateBlob("b");
  b->Resize(braid::DType::kFloat32, {3});
  for (int64_t i = 0; i < b->numel(); ++i) b->mutable_data<float>()[i] = -1.f;
  braid::Tensor* step = ws->CreateBlob("step");
  step->Resize(braid::DType::kInt64, {1});
  step->mutable_data<int64_t>()[0] = 7;
}

bool SameBlob(const braid::Tensor& a, const braid::Tensor& b, bool compare_values) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  return !compare_values || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

void LoadAndCheck(const std::string& path) {
  braid::Workspace before;
  Fill(&before);
  braid::Workspace ws;
  Fill(&ws);
  bool loaded = true;
  try {
    braid::LoadCheckpoint(path, kBlobs, "fuzz", &ws);
  } catch (const braid::Error&) {
    loaded = false;
  }
  for (const std::string& name : kBlobs) {
    if (!SameBlob(*before.GetBlob(name), *ws.GetBlob(name), /*compare_values=*/!loaded)) {
      std::fprintf(stderr, "blob '%s' changed %s\n", name.c_str(),
                   loaded ? "its type or shape" : "although the checkpoint was refused");
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  braid::fuzz::QuietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  LoadAndCheck(braid::fuzz::WriteTemp("checkpoint.pb", bytes));
  LoadAndCheck(braid::fuzz::WriteTemp("checkpoint.pbtxt", bytes));
  return 0;
}
