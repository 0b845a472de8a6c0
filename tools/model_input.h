// ModelInput: braid_run's --input flag, "NAME=FILE.npy" or "NAME=random", and the tensor it feeds.
//
// A .npy file (runtime/io/npy_file.h) is fed as it is, in its own shape; its dtype must be the
// input's when the model says which (value_info.json, or float32 for an ONNX model). "random" is
// uniform values in [-1, 1) drawn from a fixed seed (std::mt19937, seed 0), in the model's shape
// and dtype (float32 or float64). Errors name the flag, the file and what was expected.
//
//   std::string error;
//   ModelInput input = ParseModelInput("data=cat.npy", &error);      // {"data", "cat.npy"}
//   Tensor host = MakeInputTensor(input, DType::kFloat32, {1, 3, 224, 224});
//
// Pure functions apart from reading the file; thread-safe.
#ifndef BRAID_TOOLS_MODEL_INPUT_H_
#define BRAID_TOOLS_MODEL_INPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "braid/dtype.h"
#include "runtime/core/tensor.h"

namespace braid {

struct ModelInput {
  std::string name;
  std::string npy_path;  // empty: random values
  bool is_random() const { return npy_path.empty(); }
};

// Parses "NAME=FILE.npy" or "NAME=random"; on failure returns {} and sets *error quoting `text`.
ModelInput ParseModelInput(const std::string& text, std::string* error);

// The host tensor `input` names: the .npy file's contents, whose dtype must be `dtype`, or random
// values of `shape` and `dtype`. Throws braid::Error naming --input and the file.
Tensor MakeInputTensor(const ModelInput& input, DType dtype, const std::vector<int64_t>& shape);

// "uniform [-1, 1), seed 0" or "from FILE.npy": where the values came from, for a report line.
std::string InputSourceText(const ModelInput& input);

}  // namespace braid

#endif  // BRAID_TOOLS_MODEL_INPUT_H_
