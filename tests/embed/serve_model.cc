// Serves a model folder (Caffe2 zoo layout) from 8 threads through one braid::Predictor and checks
// every answer against a single-threaded run. Usage: serve_model MODEL_DIR
#include <braid/predictor.h>

#include <atomic>
#include <cstring>
#include <iostream>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: serve_model MODEL_DIR\n";
    return 2;
  }
  braid::PredictorOptions options;
  options.max_concurrent_runs = 4;  // four activation arenas; the parameters are held once
  std::unique_ptr<braid::Predictor> predictor;
  braid::Status status = braid::Predictor::FromModelFolder(argv[1], options, &predictor);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  const std::string input = predictor->input_names()[0];
  const std::string output = predictor->output_names()[0];
  const std::vector<int64_t> shape = {2, 3, 16, 16};

  // 16 different images, each answered once on this thread.
  std::vector<std::vector<float>> images(16, std::vector<float>(2 * 3 * 16 * 16));
  std::vector<braid::OutputTensor> expected(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    for (size_t j = 0; j < images[i].size(); ++j) {
      images[i][j] = ((i * 131 + j * 7) % 97) / 48.f - 1;
    }
    std::map<std::string, braid::OutputTensor> outputs;
    status = predictor->Run({{input, braid::InputView::Of(images[i].data(), shape)}}, &outputs);
    if (!status.ok()) {
      std::cerr << status.ToString() << "\n";
      return 1;
    }
    expected[i] = outputs[output];
  }

  // 8 client threads, 50 requests each, answers compared bit for bit.
  std::atomic<int> wrong{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      std::map<std::string, braid::OutputTensor> outputs;
      for (int r = 0; r < 50; ++r) {
        const size_t i = (t * 3 + r) % images.size();
        const braid::Status s =
            predictor->Run({{input, braid::InputView::Of(images[i].data(), shape)}}, &outputs);
        if (!s.ok() || outputs[output].bytes != expected[i].bytes) ++wrong;
      }
    });
  }
  for (std::thread& client : clients) client.join();

  const braid::PredictorMemory memory = predictor->memory();
  std::cout << "400 requests from 8 threads, " << wrong << " wrong; " << memory.contexts
            << " contexts, parameters " << memory.parameter_bytes << " B (once), arenas "
            << memory.arena_bytes << " B (lower bound " << memory.lower_bound_bytes << " B)\n";
  return wrong == 0 ? 0 : 1;
}
