// AlgorithmRegistry with scripted finders (no kernels): one search per key however many threads
// and devices ask, the fastest candidate that fits the workspace limit, the rule mode, save/load,
// malformed files, concurrent searches of different keys and the search guard.
#include "runtime/device/algorithm_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace braid {
namespace {

Device Sim(int id) { return {DeviceType::kSim, id}; }

// A flag one thread raises and another awaits with a timeout, so that a registry that serialises
// searches fails the test instead of hanging it.
class Signal {
 public:
  void Raise() {
    std::lock_guard<std::mutex> lock(mu_);
    raised_ = true;
    cv_.notify_all();
  }
  bool WaitFor(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return raised_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool raised_ = false;
};

// Candidates with fixed workspace needs and times.
struct Scripted {
  std::string algorithm;
  int64_t workspace_bytes;
  double ms;
};
AlgorithmFinder ScriptedFinder(std::vector<Scripted> script, std::vector<std::string>* timed) {
  return [script, timed] {
    std::vector<AlgorithmCandidate> candidates;
    for (const Scripted& s : script) {
      candidates.push_back({s.algorithm, s.workspace_bytes, [s, timed] {
                              if (timed != nullptr) timed->push_back(s.algorithm);
                              return s.ms;
                            }});
    }
    return candidates;
  };
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "_" + std::to_string(::getpid()) + ".txt"))
      .string();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

TEST(AlgorithmRegistryTest, SixteenThreadsOnFourDevicesMakeOneSearchPerKeyAndAgree) {
  constexpr int kDevices = 4, kThreadsPerDevice = 16, kKeys = 50;
  AlgorithmRegistry registry;
  std::atomic<int> finder_runs{0};
  // Each search draws random times, so two searches of one key would likely disagree.
  const auto finder = [&finder_runs] {
    ++finder_runs;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::vector<AlgorithmCandidate> candidates;
    for (const char* name : {"a", "b", "c"}) {
      candidates.push_back({name, 0, [] {
                              thread_local std::mt19937 random(std::random_device{}());
                              return std::uniform_real_distribution<double>(1, 2)(random);
                            }});
    }
    return candidates;
  };
  std::vector<std::vector<std::string>> answers(kDevices * kThreadsPerDevice);
  std::vector<std::thread> threads;
  for (int t = 0; t < kDevices * kThreadsPerDevice; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int> order(kKeys);
      for (int k = 0; k < kKeys; ++k) order[k] = k;
      std::shuffle(order.begin(), order.end(), std::mt19937(t));  // seed: the thread's index
      answers[t].resize(kKeys);
      for (int k : order) {
        const AlgorithmRequest request{"key" + std::to_string(k), Sim(t % kDevices), -1};
        answers[t][k] = registry.Choose(request, finder).algorithm;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(finder_runs.load(), kKeys);
  EXPECT_EQ(registry.searches(), kKeys);
  for (size_t t = 1; t < answers.size(); ++t) EXPECT_EQ(answers[t], answers[0]) << "thread " << t;
  EXPECT_EQ(registry.Entries().size(), static_cast<size_t>(kKeys));
}

TEST(AlgorithmRegistryTest, PicksTheFastestCandidateThatFitsTheWorkspaceLimit) {
  AlgorithmRegistry registry;
  std::vector<std::string> timed;
  const AlgorithmChoice choice = registry.Choose(
      {"conv", Sim(0), 600},
      ScriptedFinder({{"huge", 1000, 1.0}, {"medium", 500, 2.0}, {"small", 100, 3.0}}, &timed));
  EXPECT_EQ(choice, (AlgorithmChoice{"medium", 500}));
  EXPECT_EQ(timed, (std::vector<std::string>{"medium", "small"}));  // "huge" never ran
}

TEST(AlgorithmRegistryTest, UnlimitedWorkspacePicksTheFastestOfAll) {
  AlgorithmRegistry registry;
  const AlgorithmChoice choice = registry.Choose(
      {"conv", Sim(0), -1},
      ScriptedFinder({{"slow", 0, 3.0}, {"huge", 1000, 1.0}, {"medium", 500, 2.0}}, nullptr));
  EXPECT_EQ(choice, (AlgorithmChoice{"huge", 1000}));
}

TEST(AlgorithmRegistryTest, ALoneCandidateThatFitsIsChosenWithoutTiming) {
  AlgorithmRegistry registry;
  std::vector<std::string> timed;
  const AlgorithmChoice choice = registry.Choose(
      {"conv", Sim(0), 100}, ScriptedFinder({{"huge", 1000, 1.0}, {"small", 50, 3.0}}, &timed));
  EXPECT_EQ(choice.algorithm, "small");
  EXPECT_TRUE(timed.empty());
}

TEST(AlgorithmRegistryTest, RuleModeTakesTheFirstCandidateThatFitsWithoutTiming) {
  AlgorithmRegistry registry(SearchMode::kRule);
  std::vector<std::string> timed;
  const AlgorithmChoice choice = registry.Choose(
      {"conv", Sim(0), 600},
      ScriptedFinder({{"huge", 1000, 1.0}, {"medium", 500, 9.0}, {"fast", 100, 0.5}}, &timed));
  EXPECT_EQ(choice.algorithm, "medium");
  EXPECT_TRUE(timed.empty());
  EXPECT_EQ(registry.searches(), 1);
}

TEST(AlgorithmRegistryTest, NoCandidateFittingIsAnErrorNamingKeyDeviceAndNeedsAndIsNotCached) {
  AlgorithmRegistry registry;
  const AlgorithmFinder finder = ScriptedFinder({{"a", 1000, 1.0}, {"b", 500, 2.0}}, nullptr);
  try {
    registry.Choose({"conv|x=1,2", Sim(2), 100}, finder);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kResourceExhausted);
    const std::string& message = e.status().message();
    EXPECT_NE(message.find("conv|x=1,2"), std::string::npos) << message;
    EXPECT_NE(message.find("sim:2"), std::string::npos) << message;
    EXPECT_NE(message.find("limit of 100 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("b needs 500"), std::string::npos) << message;
  }
  EXPECT_FALSE(registry.Find("conv|x=1,2").has_value());
  EXPECT_EQ(registry.Choose({"conv|x=1,2", Sim(2), 500}, finder).algorithm, "b");
  EXPECT_EQ(registry.searches(), 2);
}

TEST(AlgorithmRegistryTest, AFinderErrorReachesTheAskerAndTheNextAskerSearchesAgain) {
  AlgorithmRegistry registry;
  EXPECT_THROW(registry.Choose({"k", Sim(0), -1},
                               []() -> std::vector<AlgorithmCandidate> {
                                 throw Error(Status::InvalidArgument("no kernel"));
                               }),
               Error);
  EXPECT_EQ(registry.Choose({"k", Sim(0), -1}, ScriptedFinder({{"a", 0, 1}}, nullptr)).algorithm,
            "a");
}

TEST(AlgorithmRegistryTest, SaveAndLoadRoundTripMakesNoSearchesAndGivesTheSameAnswers) {
  const std::string path = TempPath("algorithm_registry_round_trip");
  AlgorithmRegistry first;
  std::map<std::string, AlgorithmChoice> chosen;
  for (int k = 0; k < 10; ++k) {
    const std::string key = "Conv/forward|x=" + std::to_string(k) + ",16,28,28|pad=1 1";
    chosen[key] = first.Choose({key, Sim(0), -1},
                               ScriptedFinder({{"direct", 0, 2.0 + k % 2}, {"winograd", 1 << k, 2.5}},
                                              nullptr));
  }
  ASSERT_TRUE(first.Save(path).ok());

  AlgorithmRegistry second;
  int64_t loaded = 0;
  ASSERT_TRUE(second.Load(path, &loaded).ok());
  EXPECT_EQ(loaded, 10);
  for (const auto& [key, choice] : chosen) {
    EXPECT_EQ(second.Choose({key, Sim(1), -1}, ScriptedFinder({{"other", 0, 0.1}}, nullptr)),
              choice)
        << key;
  }
  EXPECT_EQ(second.searches(), 0);
  EXPECT_EQ(second.Entries(), first.Entries());
  std::filesystem::remove(path);
}

TEST(AlgorithmRegistryTest, LoadedEntriesNeverReplaceAnAnswerAlreadyGiven) {
  const std::string path = TempPath("algorithm_registry_keep");
  WriteFile(path, "braid-algorithm-registry 1\nk\tfrom_file\t0\nnew\tloaded\t7\n");
  AlgorithmRegistry registry;
  registry.Choose({"k", Sim(0), -1}, ScriptedFinder({{"searched", 0, 1}}, nullptr));
  int64_t loaded = 0;
  ASSERT_TRUE(registry.Load(path, &loaded).ok());
  EXPECT_EQ(loaded, 1);
  EXPECT_EQ(registry.Find("k")->algorithm, "searched");
  EXPECT_EQ(registry.Find("new"), (AlgorithmChoice{"loaded", 7}));
  std::filesystem::remove(path);
}

TEST(AlgorithmRegistryTest, AMalformedFileIsAnErrorNamingTheFileAndLineAndAddsNothing) {
  const std::string path = TempPath("algorithm_registry_malformed");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"braid-algorithm-registry 2\n", "line 1: expected the version line"},
      {"", "line 1: expected the version line"},
      {"braid-algorithm-registry 1\na\tb\t1\nonly two\tfields\n", "line 3: expected KEY"},
      {"braid-algorithm-registry 1\n# comment\na\tb\tmany\n", "line 3: workspace bytes 'many'"},
      {"braid-algorithm-registry 1\na\tb\t-4\n", "line 2: workspace bytes '-4'"},
      {"braid-algorithm-registry 1\na\t\t4\n", "line 2: empty algorithm"},
      {"braid-algorithm-registry 1\na\tb\t4\na\tc\t4\n", "line 3: key 'a' again"},
  };
  for (const auto& [text, expected] : cases) {
    WriteFile(path, text);
    AlgorithmRegistry registry;
    const Status status = registry.Load(path);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(status.message().find("'" + path + "' " + expected), std::string::npos)
        << "file:\n" << text << "status: " << status.ToString();
    EXPECT_TRUE(registry.Entries().empty()) << text;
  }
  std::filesystem::remove(path);
  AlgorithmRegistry registry;
  EXPECT_EQ(registry.Load(path).code(), StatusCode::kNotFound);
}

TEST(AlgorithmRegistryTest, DifferentKeysOnDifferentDevicesSearchConcurrently) {
  AlgorithmRegistry registry;
  Signal b_started;
  bool a_saw_b = false;
  std::thread a([&] {
    registry.Choose({"A", Sim(0), -1}, [&] {
      a_saw_b = b_started.WaitFor(std::chrono::seconds(10));  // a serialised registry times out
      return std::vector<AlgorithmCandidate>{{"x", 0, [] { return 1.0; }}};
    });
  });
  std::thread b([&] {
    registry.Choose({"B", Sim(1), -1}, [&] {
      b_started.Raise();
      return std::vector<AlgorithmCandidate>{{"y", 0, [] { return 1.0; }}};
    });
  });
  a.join();
  b.join();
  EXPECT_TRUE(a_saw_b) << "key A's search did not overlap key B's";
  EXPECT_EQ(registry.searches(), 2);
}

TEST(AlgorithmRegistryTest, TheSearchGuardOfTheAskingDeviceIsHeldWhileTheFinderRuns) {
  AlgorithmRegistry registry;
  std::mutex device_lock;
  std::vector<std::string> guarded;
  registry.SetSearchGuard([&](const Device& device) {
    guarded.push_back(device.ToString());
    return std::unique_lock<std::mutex>(device_lock);
  });
  bool held_during_search = false;
  registry.Choose({"k", Sim(3), -1}, [&] {
    std::thread probe([&] { held_during_search = !device_lock.try_lock(); });
    probe.join();
    return std::vector<AlgorithmCandidate>{{"x", 0, [] { return 1.0; }}};
  });
  EXPECT_TRUE(held_during_search);
  EXPECT_EQ(guarded, (std::vector<std::string>{"sim:3"}));
  EXPECT_TRUE(device_lock.try_lock());  // released after the search
  device_lock.unlock();
}

TEST(AlgorithmRegistryTest, AKeyWithATabIsRejected) {
  AlgorithmRegistry registry;
  try {
    registry.Choose({"bad\tkey", Sim(0), -1}, ScriptedFinder({{"a", 0, 1}}, nullptr));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(registry.searches(), 0);
}

}  // namespace
}  // namespace braid
