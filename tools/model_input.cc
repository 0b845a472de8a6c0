#include "tools/model_input.h"

#include <random>

#include "braid/status.h"
#include "runtime/io/npy_file.h"

namespace braid {
namespace {

template <typename T>
void FillUniform(Tensor* tensor) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  T* data = tensor->mutable_data<T>();
  for (int64_t i = 0; i < tensor->numel(); ++i) data[i] = static_cast<T>(uniform(rng));
}

}  // namespace

ModelInput ParseModelInput(const std::string& text, std::string* error) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    *error = "'" + text + "': expected NAME=FILE.npy or NAME=random";
    return {};
  }
  ModelInput input{text.substr(0, equals), text.substr(equals + 1)};
  if (input.npy_path == "random") input.npy_path.clear();
  error->clear();
  return input;
}

Tensor MakeInputTensor(const ModelInput& input, DType dtype, const std::vector<int64_t>& shape) {
  Tensor host;
  if (input.is_random()) {
    const std::string flag = "--input " + input.name + "=random";
    if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
      throw Error(Status::InvalidArgument(flag + ": random values are for float inputs; '" +
                                          input.name + "' is " + DTypeName(dtype) +
                                          " (give a .npy file)"));
    }
    host.Resize(dtype, shape);
    if (dtype == DType::kFloat32) {
      FillUniform<float>(&host);
    } else {
      FillUniform<double>(&host);
    }
    return host;
  }
  const Status status = ReadNpyFile(input.npy_path, &host);
  if (!status.ok())
    throw Error(Status(status.code(), "--input " + input.name + ": " + status.message()));
  if (host.dtype() != dtype) {
    throw Error(Status::InvalidArgument("--input " + input.name + "=" + input.npy_path +
                                        ": the file holds " + host.ShapeString() + ", but input '" +
                                        input.name + "' is " + DTypeName(dtype) +
                                        " (numpy: a.astype(numpy." + DTypeName(dtype) + "))"));
  }
  return host;
}

std::string InputSourceText(const ModelInput& input) {
  return input.is_random() ? "uniform [-1, 1), seed 0" : "from " + input.npy_path;
}

}  // namespace braid
