// braid_bench_serving: one model served to 1, 2, 4 and 8 client threads through one Predictor,
// side by side with the same requests serialised through one Session.
//
//   OMP_NUM_THREADS=1 braid_bench_serving MODEL.onnx [--clients 1,2,4,8] [--seconds 5]
//
// The model is imported once (runtime/onnx/onnx_import.h) and written as a zoo folder in a
// temporary directory, which both sides load. For each client count C, C threads each send
// requests (batch as the model's input, one fixed uniform [-1, 1) input per thread) for --seconds:
//   predictor  a Predictor with C contexts (runtime/predictor.h): up to C requests at once, the
//              parameters held once, one planned activation arena per context (optimize_graph
//              off: the same net as the Session's);
//   session    one Session (runtime/session.h) with its net's memory planned, behind a mutex:
//              Feed, RunNet, Fetch, one request at a time.
// Each row prints requests/s, the median and 99th-percentile latency (ms, from the client's
// call to its return, waiting included), the predictor/session throughput ratio, and for the
// predictor its memory: parameters (once), the activation arenas of all contexts against their
// lower bound, and the process's resident size after the row (VmRSS; the Session's rows run
// first and its memory stays, so the predictor's growth is the difference between rows).
//
// Threads: each request runs its ops on the calling thread (the simple executor) with
// OMP_NUM_THREADS threads per op; the process reads it once at start. With C clients on a machine
// of P cores, OMP_NUM_THREADS=1 keeps C x threads <= P where C <= P.
// Exit codes: 0 success, 1 the model failed to load or run, 2 bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <filesystem>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/model_folder.h"
#include "runtime/onnx/onnx_import.h"
#include "runtime/predictor.h"
#include "runtime/session.h"
#include "runtime/status.h"
#include "tools/bench/process_stats.h"
#include "tools/command_line.h"

DEFINE_string(clients, "1,2,4,8", "client thread counts, one row each");
DEFINE_double(seconds, 5, "seconds each row sends requests for");

namespace braid {
namespace {

using Clock = std::chrono::steady_clock;

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw Error(status);
}

struct Row {
  int64_t requests = 0;
  double seconds = 0;
  double p50_ms = 0, p99_ms = 0;
};


// `clients` threads each calling `request` (given the thread's index) for --seconds; the first
// error a request throws is rethrown once every thread has stopped.
template <typename Request>
Row Drive(int clients, const Request& request) {
  std::vector<std::vector<double>> latencies(clients);
  std::mutex error_mutex;
  std::exception_ptr error;  // guarded by error_mutex
  std::atomic<bool> failed{false};
  const Clock::time_point start = Clock::now();
  const Clock::time_point end = start + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(FLAGS_seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      while (Clock::now() < end && !failed) {
        const Clock::time_point sent = Clock::now();
        try {
          request(c);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
          failed = true;
        }
        latencies[c].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  Row row;
  row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  row.requests = static_cast<int64_t>(all.size());
  row.p50_ms = Quantile(all, 0.5);
  row.p99_ms = Quantile(all, 0.99);
  return row;
}


double MiB(int64_t bytes) { return bytes / 1048576.0; }

// The model's input filled with uniform [-1, 1) values, one per client (seed 0).
std::vector<std::vector<float>> Inputs(const ValueInfo& input, int clients) {
  int64_t numel = 1;
  for (int64_t d : input.shape) numel *= d;
  std::mt19937 random(0);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::vector<float>> inputs(clients, std::vector<float>(numel));
  for (auto& values : inputs) {
    for (float& v : values) v = uniform(random);
  }
  return inputs;
}

void PrintRow(const char* side, int clients, const Row& row, double ratio) {
  std::printf("%-9s %7d %10.1f %9.2f %9.2f", side, clients, row.requests / row.seconds, row.p50_ms,
              row.p99_ms);
  if (ratio > 0) std::printf(" %8.2fx", ratio);
}

void Serve(const std::string& model_path, const std::vector<int>& client_counts) {
  ModelFolder model;
  ThrowIfError(ImportOnnxFile(model_path, {}, &model));
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("braid_bench_serving_" + std::to_string(::getpid())))
                              .string();
  WriteModelFolder(dir, model);
  const ValueInfo input = model.inputs.at(0);
  const std::string output = model.predict_net.external_output(0);
  model = ModelFolder();  // the folder holds it now
  const std::vector<std::vector<float>> inputs =
      Inputs(input, *std::max_element(client_counts.begin(), client_counts.end()));
  const char* omp = std::getenv("OMP_NUM_THREADS");
  std::printf("%s: input %s %s, output %s, OMP_NUM_THREADS=%s, %g s per row, %u hardware threads\n",
              model_path.c_str(), input.name.c_str(), DTypeName(input.dtype), output.c_str(),
              omp ? omp : "(unset)", FLAGS_seconds, std::thread::hardware_concurrency());

  // The Session's rows: one request at a time.
  Session session;
  ThrowIfError(session.RunNetOnce(dir + "/init_net.pb"));
  ThrowIfError(session.Feed(input.name, input.shape, inputs[0]));
  std::string net;
  ThrowIfError(session.LoadNet(dir + "/predict_net.pb", &net));
  ThrowIfError(session.PlanMemory(net));
  std::mutex session_mutex;
  std::vector<Row> session_rows;
  for (int clients : client_counts) {
    session_rows.push_back(Drive(clients, [&](int c) {
      std::lock_guard<std::mutex> lock(session_mutex);
      std::vector<int64_t> shape;
      std::vector<float> values;
      ThrowIfError(session.Feed(input.name, input.shape, inputs[c]));
      ThrowIfError(session.RunNet(net));
      ThrowIfError(session.Fetch(output, &shape, &values));
    }));
  }
  const int64_t rss_after_session = ProcStatusBytes("VmRSS:");

  // The Predictor's rows: a predictor with as many contexts as clients.
  std::printf("%-9s %7s %10s %9s %9s %9s  %s\n", "serving", "clients", "requests/s", "p50 ms",
              "p99 ms", "vs session", "memory");
  for (size_t i = 0; i < client_counts.size(); ++i) {
    const int clients = client_counts[i];
    PredictorOptions options;
    options.max_concurrent_runs = clients;
    // The Session runs the net as imported: so does the Predictor here, so that the ratio measures
    // serving, not the load-time rewrites (braid_bench_inference measures those).
    options.optimize_graph = false;
    std::unique_ptr<Predictor> predictor;
    ThrowIfError(Predictor::FromModelFolder(dir, options, &predictor));
    std::vector<std::map<std::string, OutputTensor>> outputs(clients);
    const Row row = Drive(clients, [&](int c) {
      ThrowIfError(predictor->Run(
          {{input.name, InputView::Of(inputs[c].data(), input.shape)}}, &outputs[c]));
    });
    const PredictorMemory memory = predictor->memory();
    PrintRow("session", clients, session_rows[i], 0);
    std::printf("\n");
    PrintRow("predictor", clients, row,
             (row.requests / row.seconds) / (session_rows[i].requests / session_rows[i].seconds));
    std::printf("  parameters %.1f MiB once; %d contexts, arenas %.1f MiB (lower bound %.1f MiB, "
                "%.1f MiB per context); scratch %.1f MiB per context; RSS %.1f MiB (%.1f after the "
                "session's rows)\n",
                MiB(memory.parameter_bytes), memory.contexts, MiB(memory.arena_bytes),
                MiB(memory.lower_bound_bytes),
                memory.contexts ? MiB(memory.arena_bytes) / memory.contexts : 0.0,
                memory.contexts ? MiB(memory.scratch_bytes) / memory.contexts : 0.0,
                MiB(ProcStatusBytes("VmRSS:")), MiB(rss_after_session));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const std::vector<std::string> models = braid::ParseCommandLine(
      argc, argv, "OMP_NUM_THREADS=1 braid_bench_serving MODEL.onnx [--clients 1,2,4,8] [--seconds 5]");
  if (models.size() != 1) {
    std::fprintf(stderr, "braid_bench_serving: expected one MODEL.onnx\n");
    return braid::kExitBadFlags;
  }
  std::vector<int> clients;
  std::stringstream list(FLAGS_clients);
  for (std::string item; std::getline(list, item, ',');) {
    const int n = std::atoi(item.c_str());
    if (n < 1) {
      std::fprintf(stderr, "braid_bench_serving: --clients wants counts >= 1, got '%s'\n",
                   FLAGS_clients.c_str());
      return braid::kExitBadFlags;
    }
    clients.push_back(n);
  }
  if (clients.empty() || FLAGS_seconds <= 0) {
    std::fprintf(stderr, "braid_bench_serving: name client counts and seconds > 0\n");
    return braid::kExitBadFlags;
  }
  return braid::RunTool("braid_bench_serving", [&] { braid::Serve(models[0], clients); });
}
