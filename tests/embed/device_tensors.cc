// Serves an ONNX model from device memory: the input is copied into memory of DEVICE (made with
// <braid/device_memory.h>), a Predictor on DEVICE reads it there in place and writes its answer
// into other memory of DEVICE, which is copied back and compared, bit for bit, with the same
// Predictor's answer from host memory. Usage: device_tensors MODEL.onnx INPUT.npy DEVICE
#include <braid/device_memory.h>
#include <braid/model_io.h>
#include <braid/predictor.h>

#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: device_tensors MODEL.onnx INPUT.npy DEVICE\n";
    return 2;
  }
  const std::string device = argv[3];
  braid::NpyArray input;
  braid::Status status = braid::ReadNpyFile(argv[2], &input);
  braid::PredictorOptions options;
  options.device = device;
  std::unique_ptr<braid::Predictor> predictor;
  if (status.ok()) status = braid::Predictor::FromOnnxFile(argv[1], options, &predictor);
  // The answer from host memory: the reference.
  std::vector<braid::OutputTensor> from_host;
  if (status.ok()) {
    status = predictor->Run({braid::InputView{input.dtype, input.shape, input.bytes.data()}},
                            &from_host);
  }
  // The same input in memory of the device, and memory there for the answer.
  const int64_t input_bytes = static_cast<int64_t>(input.bytes.size());
  std::unique_ptr<braid::DeviceMemory> in, out;
  if (status.ok()) status = braid::DeviceMemory::Allocate(device, input_bytes, &in);
  if (status.ok()) status = in->CopyFromHost(input.bytes.data(), input_bytes);
  const int64_t answer_bytes = status.ok() ? static_cast<int64_t>(from_host[0].bytes.size()) : 0;
  if (status.ok()) status = braid::DeviceMemory::Allocate(device, answer_bytes, &out);
  std::map<std::string, braid::OutputView> answer;
  if (status.ok()) {
    answer[predictor->output_names()[0]] =
        braid::OutputView(out->data(), out->bytes(), device, from_host[0].dtype);
    const braid::InputView view(input.dtype, input.shape, in->data(), device);
    status = predictor->Run({{predictor->input_names()[0], view}}, &answer);
  }
  std::vector<uint8_t> back(answer_bytes);
  if (status.ok()) status = out->CopyToHost(back.data(), answer_bytes);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  if (back != from_host[0].bytes) {
    std::cerr << "the answer from " << device << " memory differs from the host memory's\n";
    return 1;
  }
  std::cout << "served '" << predictor->output_names()[0] << "' (" << answer_bytes
            << " bytes) from and into " << device << " memory, bit for bit as from host memory\n";
  return 0;
}
