// Imports an ONNX model, writes it as a Caffe2 model-zoo folder, serves the folder and saves the
// answer as a .npy file, through <braid/model_io.h> and <braid/predictor.h>; with EXPECTED.npy
// (float32), checks the answer against it. Usage:
//   model_io MODEL.onnx INPUT.npy FOLDER OUTPUT.npy [EXPECTED.npy]
#include <braid/model_io.h>
#include <braid/predictor.h>

#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <string>

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::cerr << "usage: model_io MODEL.onnx INPUT.npy FOLDER OUTPUT.npy [EXPECTED.npy]\n";
    return 2;
  }
  braid::ModelFolder model;
  braid::Status status = braid::ImportOnnxFile(argv[1], {}, &model);
  if (status.ok()) status = braid::WriteModelFolder(argv[3], model);
  braid::NpyArray input;
  if (status.ok()) status = braid::ReadNpyFile(argv[2], &input);
  std::unique_ptr<braid::Predictor> predictor;
  if (status.ok()) status = braid::Predictor::FromModelFolder(argv[3], {}, &predictor);
  std::map<std::string, braid::OutputTensor> outputs;
  if (status.ok()) {
    const braid::InputView view{input.dtype, input.shape, input.bytes.data()};
    status = predictor->Run({{model.inputs[0].name, view}}, &outputs);
  }
  if (status.ok()) {
    const braid::OutputTensor& out = outputs.begin()->second;
    status = braid::WriteNpyFile(argv[4], {out.dtype, out.shape, out.bytes});
  }
  braid::NpyArray expected;
  if (status.ok() && argc == 6) status = braid::ReadNpyFile(argv[5], &expected);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  if (argc == 6) {
    const braid::OutputTensor& out = outputs.begin()->second;
    if (out.shape != expected.shape || out.data<float>() == nullptr) return 1;
    for (int64_t i = 0; i < expected.numel(); ++i) {
      const float want = expected.data<float>()[i];
      if (std::fabs(out.data<float>()[i] - want) > 1e-4f * (1 + std::fabs(want))) {
        std::cerr << "element " << i << ": " << out.data<float>()[i] << ", expected " << want
                  << "\n";
        return 1;
      }
    }
  }
  std::cout << "served " << outputs.begin()->first << " of " << model.predict_net.op_size()
            << " ops from " << argv[3] << " into " << argv[4] << "\n";
  return 0;
}
