// Serves a model folder (Caffe2 zoo layout) from 8 threads through one braid::Predictor and checks
// every answer against a single-threaded run; then the same images as asynchronous requests, and
// one request whose deadline has passed. Usage: serve_model MODEL_DIR
#include <braid/predictor.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <iostream>
#include <thread>
#include <utility>
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

  // 16 different images, each answered once on this thread, by position: the inputs in
  // input_names() order, the outputs in output_names() order (moved out, not copied).
  std::vector<std::vector<float>> images(16, std::vector<float>(2 * 3 * 16 * 16));
  std::vector<braid::OutputTensor> expected(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    for (size_t j = 0; j < images[i].size(); ++j) {
      images[i][j] = ((i * 131 + j * 7) % 97) / 48.f - 1;
    }
    std::vector<braid::OutputTensor> outputs;
    status = predictor->Run({braid::InputView::Of(images[i].data(), shape)}, &outputs);
    if (!status.ok()) {
      std::cerr << status.ToString() << "\n";
      return 1;
    }
    expected[i] = std::move(outputs[0]);
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

  // RunAsync answers on the Predictor's threads; each future owns its outputs. The images must
  // stay valid until their futures are ready.
  std::vector<std::future<braid::RunResult>> answers;
  for (const std::vector<float>& image : images) {
    answers.push_back(predictor->RunAsync({{input, braid::InputView::Of(image.data(), shape)}}));
  }
  for (size_t i = 0; i < answers.size(); ++i) {
    braid::RunResult answer = answers[i].get();
    if (!answer.status.ok() || answer.outputs[output].bytes != expected[i].bytes) ++wrong;
  }
  // A request past its deadline is answered DeadlineExceeded without running.
  braid::RunOptions too_late;
  too_late.deadline = std::chrono::steady_clock::now();
  std::map<std::string, braid::OutputTensor> unused;
  status = predictor->Run({{input, braid::InputView::Of(images[0].data(), shape)}}, &unused,
                          too_late);
  if (status.code() != braid::StatusCode::kDeadlineExceeded) ++wrong;

  const braid::PredictorMemory memory = predictor->memory();
  std::cout << "400 requests from 8 threads, 16 asynchronous, 1 too late: " << wrong << " wrong; "
            << memory.contexts << " contexts, parameters " << memory.parameter_bytes
            << " B (once), arenas "
            << memory.arena_bytes << " B (lower bound " << memory.lower_bound_bytes << " B)\n";
  return wrong == 0 ? 0 : 1;
}
