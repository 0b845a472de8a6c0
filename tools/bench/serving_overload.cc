#include "tools/bench/serving_overload.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace braid {
namespace {

using Clock = std::chrono::steady_clock;

// Client threads: enough for every request that can be waiting with a deadline (twice the
// arrivals within one deadline), at least 16.
int ClientThreads(double rate, double deadline_ms) {
  const double in_flight = rate * deadline_ms / 1000.0;
  return static_cast<int>(std::clamp(2 * std::ceil(in_flight) + 8, 16.0, 256.0));
}

}  // namespace

void DriveOpenLoop(const Predictor& predictor, double rate, double seconds, double deadline_ms,
                   bool with_deadline, const std::vector<std::map<std::string, InputView>>& inputs,
                   OverloadRow* row) {
  const auto deadline_after = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(deadline_ms));
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  const int64_t count = std::max<int64_t>(1, std::llround(rate * seconds));

  std::mutex mu;
  std::condition_variable arrived;
  std::deque<std::pair<int64_t, Clock::time_point>> waiting;  // guarded by mu: (k, arrival)
  bool all_sent = false;                                      // guarded by mu
  OverloadRow counted;                                        // guarded by mu
  std::exception_ptr error;                                   // guarded by mu

  const auto client = [&] {
    std::map<std::string, OutputTensor> outputs;
    for (;;) {
      std::pair<int64_t, Clock::time_point> request;
      {
        std::unique_lock<std::mutex> lock(mu);
        arrived.wait(lock, [&] { return !waiting.empty() || all_sent; });
        if (waiting.empty()) return;
        request = waiting.front();
        waiting.pop_front();
      }
      RunOptions options;
      if (with_deadline) options.deadline = request.second + deadline_after;
      const Status status = predictor.Run(inputs[request.first % inputs.size()], &outputs, options);
      const double ms =
          std::chrono::duration<double, std::milli>(Clock::now() - request.second).count();
      std::lock_guard<std::mutex> lock(mu);
      counted.latencies_ms.push_back(ms);
      if (status.ok()) {
        ++counted.ok;
        if (ms <= deadline_ms) ++counted.ok_within_ms;
      } else if (status.code() == StatusCode::kDeadlineExceeded) {
        ++counted.deadline_exceeded;
      } else if (!error) {
        error = std::make_exception_ptr(Error(status));
      }
    }
  };
  std::vector<std::thread> clients;
  for (int i = 0; i < ClientThreads(rate, deadline_ms); ++i) clients.emplace_back(client);

  const Clock::time_point start = Clock::now();
  for (int64_t k = 0; k < count; ++k) {
    const Clock::time_point arrival = start + k * interval;
    std::this_thread::sleep_until(arrival);
    {
      std::lock_guard<std::mutex> lock(mu);
      waiting.emplace_back(k, arrival);
    }
    arrived.notify_one();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    all_sent = true;
  }
  arrived.notify_all();
  for (std::thread& c : clients) c.join();
  if (error) std::rethrow_exception(error);

  row->seconds += std::chrono::duration<double>(Clock::now() - start).count();
  row->sent += count;
  row->ok += counted.ok;
  row->ok_within_ms += counted.ok_within_ms;
  row->deadline_exceeded += counted.deadline_exceeded;
  row->latencies_ms.insert(row->latencies_ms.end(), counted.latencies_ms.begin(),
                           counted.latencies_ms.end());
}

}  // namespace braid
