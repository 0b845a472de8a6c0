// braid_bench_serving: one model served to 1, 2, 4 and 8 client threads through one Predictor,
// side by side with the same requests serialised through one Session.
//
//   braid_bench_serving MODEL.onnx [--clients 1,2,4,8] [--seconds 6] [--rounds 3]
//                       [--deadline_ms 50 --overload 1.5]
//
// The model is imported once (runtime/io/onnx/onnx_import.h) and written as a zoo folder in a
// temporary directory, which both sides load. For each client count C, C threads each send
// requests (batch as the model's input, one fixed uniform [-1, 1) input per thread) for --seconds:
//   session    one Session (include/braid/session.h) with its net's memory planned, behind a mutex:
//              Feed, RunNet, Fetch, one request at a time;
//   predictor  a Predictor with C contexts (include/braid/predictor.h): up to C requests at once, the
//              parameters held once, one planned activation arena per context (optimize_graph
//              off: the same net as the Session's), each op with the process's OpenMP team;
//   1-thread   the same with PredictorOptions::intra_op_threads 1: one-thread teams.
// The rows of one client count take turns, --rounds times, each for --seconds / --rounds, so that
// the machine's drift (large on shared VMs) falls on all of them alike.
// Each row prints requests/s, the median and 99th-percentile latency (ms, from the client's
// call to its return, waiting included), the throughput ratio to the session's row, and for the
// predictors their memory: parameters (once), the activation arenas of all contexts against their
// lower bound, and the scratch areas.
//
// With --deadline_ms D, two more rows under open-loop overload (tools/bench/serving_overload.h):
// requests arrive at --overload times the predictor row's requests/s at the largest client count
// (its contexts), through one Predictor with that many contexts, without a deadline and with one
// D ms after each arrival (RunOptions), the two rows taking turns over the rounds. Each prints the
// requests sent, answers/s (OK answers over the time from the first arrival to the last answer),
// the median and 99th-percentile latency of every request (arrival to return), the answers within
// D ms, the DeadlineExceeded and the answers after D ms.
//
// Threads: OMP_NUM_THREADS (or every hardware thread) per op, read once at start; GOMP_SPINCOUNT
// is 1000 unless the environment sets it (tools/thread_environment.h: the binary re-executes
// itself with it).
// Exit codes: 0 success, 1 the model failed to load or run, 2 bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <filesystem>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "braid/predictor.h"
#include "braid/session.h"
#include "braid/status.h"
#include "runtime/io/model_folder.h"
#include "runtime/io/onnx/onnx_import.h"
#include "tools/bench/process_stats.h"
#include "tools/bench/serving_overload.h"
#include "tools/command_line.h"
#include "tools/thread_environment.h"

DEFINE_string(clients, "1,2,4,8", "client thread counts, one row each");
DEFINE_double(seconds, 6, "seconds each row sends requests for, over all rounds");
DEFINE_int32(rounds, 3, "rounds: each row's seconds are split into them, the rows taking turns");
DEFINE_double(deadline_ms, 0, "with > 0: rows under open-loop overload, with and without this "
              "deadline after each request's arrival");
DEFINE_double(overload, 1.5, "the overload rows' arrival rate, as a multiple of the predictor "
              "row's requests/s at the largest client count");

namespace braid {
namespace {

using Clock = std::chrono::steady_clock;

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw Error(status);
}

// One side's requests over all rounds: their latencies (ms) and the seconds they were sent for.
struct Row {
  std::vector<double> latencies_ms;
  double seconds = 0;
  double rate() const { return latencies_ms.size() / seconds; }
};

// `clients` threads each calling `request` (given the thread's index) at least once and for
// `seconds`, adding to *row; the first error a request throws is rethrown once every thread has
// stopped.
template <typename Request>
void Drive(int clients, double seconds, const Request& request, Row* row) {
  std::vector<std::vector<double>> latencies(clients);
  std::mutex error_mutex;
  std::exception_ptr error;  // guarded by error_mutex
  std::atomic<bool> failed{false};
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      do {
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
      } while (Clock::now() < end && !failed);
    });
  }
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  row->seconds += std::chrono::duration<double>(Clock::now() - start).count();
  for (const auto& l : latencies) row->latencies_ms.insert(row->latencies_ms.end(), l.begin(), l.end());
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

// One way of serving the requests: a name, what one client's request does, and its predictor
// (none for the session).
struct Side {
  std::string name{};
  std::function<void(int client)> request{};
  std::unique_ptr<Predictor> predictor{};
  Row row{};
};

// The overload rows (see the top of this file): `capacity` requests/s at `clients` contexts.
void ServeOverload(const std::string& dir, const std::string& input_name,
                   const std::vector<int64_t>& shape, const std::vector<std::vector<float>>& inputs,
                   int clients, double capacity) {
  PredictorOptions options;
  options.max_concurrent_runs = clients;
  options.optimize_graph = false;  // as the predictor rows above
  std::unique_ptr<Predictor> predictor;
  ThrowIfError(Predictor::FromModelFolder(dir, options, &predictor));
  std::vector<std::map<std::string, InputView>> requests;
  for (const auto& values : inputs) {
    requests.push_back({{input_name, InputView::Of(values.data(), shape)}});
  }
  std::map<std::string, OutputTensor> outputs;
  for (const auto& request : requests) ThrowIfError(predictor->Run(request, &outputs));  // warm
  const double rate = FLAGS_overload * capacity;
  std::printf("\noverload: %d contexts, offered %.1f requests/s (%.2fx the predictor row's %.1f) "
              "for %g s per row in %d rounds\n",
              clients, rate, FLAGS_overload, capacity, FLAGS_seconds, FLAGS_rounds);
  OverloadRow rows[2];
  for (int round = 0; round < FLAGS_rounds; ++round) {
    for (int k = 0; k < 2; ++k) {
      const int which = (round + k) % 2;  // 0: no deadline, 1: with it
      DriveOpenLoop(*predictor, rate, FLAGS_seconds / FLAGS_rounds, FLAGS_deadline_ms,
                    /*with_deadline=*/which == 1, requests, &rows[which]);
    }
  }
  std::printf("%-14s %7s %10s %9s %9s %11s %16s %11s\n", "deadline", "sent", "answers/s",
              "p50 ms", "p99 ms", "within D ms", "DeadlineExceeded", "after D ms");
  for (int which = 0; which < 2; ++which) {
    const OverloadRow& row = rows[which];
    char name[32];
    std::snprintf(name, sizeof(name), which == 0 ? "none" : "%g ms", FLAGS_deadline_ms);
    std::printf("%-14s %7lld %10.1f %9.2f %9.2f %11lld %16lld %11lld\n", name,
                static_cast<long long>(row.sent), row.ok / row.seconds,
                Quantile(row.latencies_ms, 0.5), Quantile(row.latencies_ms, 0.99),
                static_cast<long long>(row.ok_within_ms),
                static_cast<long long>(row.deadline_exceeded),
                static_cast<long long>(row.ok - row.ok_within_ms));
  }
}

void Serve(const std::string& model_path, const std::vector<int>& client_counts) {
  ModelFolder model;
  ThrowIfError(ImportOnnxFile(model_path, {}, &model));
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("braid_bench_serving_" + std::to_string(::getpid())))
                              .string();
  const Status written = WriteModelFolder(dir, model);
  if (!written.ok()) throw Error(written);
  const ValueInfo input = model.inputs.at(0);
  const std::string output = model.predict_net.external_output(0);
  model = ModelFolder();  // the folder holds it now
  const std::vector<std::vector<float>> inputs =
      Inputs(input, *std::max_element(client_counts.begin(), client_counts.end()));
  const char* omp = std::getenv("OMP_NUM_THREADS");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  std::printf("%s: input %s %s, output %s, OMP_NUM_THREADS=%s, GOMP_SPINCOUNT=%s, %g s per row in "
              "%d rounds, %u hardware threads\n",
              model_path.c_str(), input.name.c_str(), DTypeName(input.dtype), output.c_str(),
              omp ? omp : "(unset)", spin ? spin : "(unset)", FLAGS_seconds, FLAGS_rounds,
              std::thread::hardware_concurrency());

  Session session;
  ThrowIfError(session.RunNetOnce(dir + "/init_net.pb"));
  ThrowIfError(session.Feed(input.name, input.shape, inputs[0]));
  std::string net;
  ThrowIfError(session.LoadNet(dir + "/predict_net.pb", &net));
  ThrowIfError(session.PlanMemory(net));
  std::mutex session_mutex;

  struct Variant {
    const char* name;
    int intra_op_threads;
  };
  const Variant variants[] = {{"predictor", 0}, {"1-thread", 1}};
  double capacity = 0;  // the predictor row's requests/s at the last client count
  std::printf("%-9s %7s %10s %9s %9s %9s  %s\n", "serving", "clients", "requests/s", "p50 ms",
              "p99 ms", "vs session", "memory");
  for (const int clients : client_counts) {
    std::vector<Side> sides;
    sides.push_back({"session", [&](int c) {
                       std::lock_guard<std::mutex> lock(session_mutex);
                       std::vector<int64_t> shape;
                       std::vector<float> values;
                       ThrowIfError(session.Feed(input.name, input.shape, inputs[c]));
                       ThrowIfError(session.RunNet(net));
                       ThrowIfError(session.Fetch(output, &shape, &values));
                     }});
    auto outputs = std::make_shared<std::vector<std::map<std::string, OutputTensor>>>(clients);
    for (const Variant& variant : variants) {
      PredictorOptions options;
      options.max_concurrent_runs = clients;
      options.intra_op_threads = variant.intra_op_threads;
      // The Session runs the net as imported: so do the predictors here, so that the ratio
      // measures serving, not the load-time rewrites (braid_bench_inference measures those).
      options.optimize_graph = false;
      Side side{variant.name};
      ThrowIfError(Predictor::FromModelFolder(dir, options, &side.predictor));
      const Predictor* predictor = side.predictor.get();
      side.request = [&, predictor, outputs](int c) {
        ThrowIfError(predictor->Run(
            {{input.name, InputView::Of(inputs[c].data(), input.shape)}}, &(*outputs)[c]));
      };
      sides.push_back(std::move(side));
    }
    // One untimed request from each client first, so that a predictor's contexts, their nets and
    // plans, and the algorithm searches are made before any row's clock runs.
    for (const Side& side : sides) {
      Row untimed;
      Drive(clients, 0, side.request, &untimed);
    }
    // Rounds, each side's turn in a rotating order: the machine's drift falls on every side.
    for (int round = 0; round < FLAGS_rounds; ++round) {
      for (size_t k = 0; k < sides.size(); ++k) {
        Side& side = sides[(round + k) % sides.size()];
        Drive(clients, FLAGS_seconds / FLAGS_rounds, side.request, &side.row);
      }
    }
    const double session_rate = sides[0].row.rate();
    capacity = sides[1].row.rate();
    for (const Side& side : sides) {
      std::printf("%-9s %7d %10.1f %9.2f %9.2f", side.name.c_str(), clients, side.row.rate(),
                  Quantile(side.row.latencies_ms, 0.5), Quantile(side.row.latencies_ms, 0.99));
      if (side.predictor == nullptr) {
        std::printf("\n");
        continue;
      }
      const PredictorMemory memory = side.predictor->memory();
      std::printf(" %8.2fx  parameters %.1f MiB once; %d contexts, arenas %.1f MiB (lower bound "
                  "%.1f MiB, %.1f MiB per context); scratch %.1f MiB per context\n",
                  side.row.rate() / session_rate, MiB(memory.parameter_bytes), memory.contexts,
                  MiB(memory.arena_bytes), MiB(memory.lower_bound_bytes),
                  memory.contexts ? MiB(memory.arena_bytes) / memory.contexts : 0.0,
                  memory.contexts ? MiB(memory.scratch_bytes) / memory.contexts : 0.0);
    }
  }
  if (FLAGS_deadline_ms > 0) {
    ServeOverload(dir, input.name, input.shape, inputs, client_counts.back(), capacity);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  braid::ExecWithEnvironment(argv, {braid::kBoundedSpin});
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const std::vector<std::string> models = braid::ParseCommandLine(
      argc, argv,
      "braid_bench_serving MODEL.onnx [--clients 1,2,4,8] [--seconds 6] [--rounds 3] "
      "[--deadline_ms D [--overload 1.5]]");
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
  if (clients.empty() || FLAGS_seconds <= 0 || FLAGS_rounds < 1 || FLAGS_deadline_ms < 0 ||
      FLAGS_overload <= 0) {
    std::fprintf(stderr, "braid_bench_serving: name client counts, seconds > 0, rounds >= 1, "
                         "deadline_ms >= 0 and overload > 0\n");
    return braid::kExitBadFlags;
  }
  return braid::RunTool("braid_bench_serving", [&] { braid::Serve(models[0], clients); });
}
