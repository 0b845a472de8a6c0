// ProcessGroup (runtime/dist/process_group.h) and the public functions over the current group
// (include/braid/process_group.h): ranks in separate processes (copies of this binary running
// ProcessGroupChild.DISABLED_Rank or PublicProcessGroupChild.DISABLED_Rank) meet through a Gloo
// store on loopback and all-reduce.
#include "runtime/dist/process_group.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <thread>
#include <vector>

#include "braid/process_group.h"
#include "testing/child_processes.h"

namespace braid {
namespace {

using braid::testing::ChildEnv;
using braid::testing::ChildProcesses;
using braid::testing::MakeTempDir;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr char kChildTest[] = "ProcessGroupChild.DISABLED_Rank";

ProcessGroupOptions OptionsFromEnv() {
  ProcessGroupOptions options;
  options.rank = std::stoi(ChildEnv("BRAID_PG_RANK"));
  options.world_size = std::stoi(ChildEnv("BRAID_PG_WORLD"));
  options.rendezvous = ChildEnv("BRAID_PG_URL");
  options.job_name = "pg_test";
  options.timeout = milliseconds(std::stoi(ChildEnv("BRAID_PG_TIMEOUT_MS")));
  return options;
}

// Rank r contributes (r + 1) * (i % 1000): integers, so the sum is exact whatever the order.
void ExpectExactSums(ProcessGroup& group) {
  const int n = group.size();
  uint32_t tag = 1;
  for (size_t count : {size_t{1}, size_t{1000}, size_t{1} << 20}) {
    for (auto algorithm : {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kHalvingDoubling}) {
      std::vector<float> data(count);
      for (size_t i = 0; i < count; ++i) data[i] = float((group.rank() + 1) * (i % 1000));
      Status s = group.AllreduceSum(data.data(), count, tag++, algorithm);
      ASSERT_TRUE(s.ok()) << s.ToString();
      size_t wrong = 0;
      for (size_t i = 0; i < count; ++i) wrong += data[i] != float(n * (n + 1) / 2 * (i % 1000));
      EXPECT_EQ(wrong, 0u) << count << " floats, algorithm " << int(algorithm);
    }
  }
  Status s = group.Barrier(tag);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// Whether `message` names `rank` as lost: "a connection to rank 3 was lost (the rank died...)", or,
// when the error came from a survivor that gave up first, "...; lost first: rank 3)".
bool NamesLostRank(const std::string& message, int rank) {
  const std::string r = std::to_string(rank);
  const std::regex died("connections? to ranks? ([0-9]+, )*" + r +
                        "(, [0-9]+)* (was|were) lost \\(the rank died");
  const std::regex first("lost first: ranks? ([0-9]+, )*" + r + "(, [0-9]+)*\\)");
  return std::regex_search(message, died) || std::regex_search(message, first);
}

// The last rank dies (SIGKILL) after a few collectives; the others must get an error in time.
void ExpectPeerLossIsAnError(ProcessGroup& group) {
  const int victim = group.size() - 1;
  std::vector<float> data(1 << 16, 1.f);
  for (int iteration = 0; iteration < 100000; ++iteration) {
    if (group.rank() == victim && iteration == 5) raise(SIGKILL);
    const auto start = Clock::now();
    Status s = group.AllreduceSum(data.data(), data.size(), 7, AllreduceAlgorithm::kRing);
    if (s.ok()) {
      std::fill(data.begin(), data.end(), 1.f);
      continue;
    }
    EXPECT_LT(Clock::now() - start, group.options().timeout + seconds(2));
    EXPECT_GE(iteration, 5) << s.ToString();
    EXPECT_TRUE(NamesLostRank(s.message(), victim)) << s.ToString();
    std::cerr << "rank " << group.rank() << " got, as expected: " << s.ToString() << "\n";
    return;
  }
  ADD_FAILURE() << "rank " << group.rank() << " never noticed its peer's death";
}

// Rank 1 stops (SIGSTOP) with its connections open; rank 0's collective times out, and nothing
// tells which rank stopped, so the error must say so rather than guess.
void ExpectStuckPeerIsAnUnnamedTimeout(ProcessGroup& group) {
  std::vector<float> data(1 << 10, 1.f);
  for (int iteration = 0; iteration < 100000; ++iteration) {
    if (group.rank() == 1 && iteration == 5) raise(SIGSTOP);
    Status s = group.AllreduceSum(data.data(), data.size(), 7, AllreduceAlgorithm::kRing);
    if (s.ok()) continue;
    EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
    EXPECT_NE(s.message().find("which rank is unknown"), std::string::npos) << s.ToString();
    std::cerr << "rank " << group.rank() << " got, as expected: " << s.ToString() << "\n";
    return;
  }
  ADD_FAILURE() << "rank " << group.rank() << " never noticed its stuck peer";
}

// Rank 0 shares two values; every rank must read them. Then rank 1 alone asks for a key rank 0
// never shares, which must end after the group's timeout naming the key and the store.
void ExpectSharedValues(ProcessGroup& group) {
  for (const std::string key : {"first", "nccl/devices 0,1/tag 7"}) {
    std::string value = group.rank() == 0 ? "value of " + key + std::string(1, '\0') + "!" : "";
    Status s = group.ShareFromRankZero(key, &value);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(value, "value of " + key + std::string(1, '\0') + "!") << "rank " << group.rank();
  }
  if (group.rank() != 1) return;
  std::string value;
  const auto start = Clock::now();
  Status s = group.ShareFromRankZero("never_shared", &value);
  EXPECT_LT(Clock::now() - start, group.options().timeout + seconds(2));
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_NE(s.message().find("never_shared"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(group.options().rendezvous), std::string::npos) << s.ToString();
}

TEST(ProcessGroupChild, DISABLED_Rank) {
  const ProcessGroupOptions options = OptionsFromEnv();
  std::unique_ptr<ProcessGroup> group;
  Status s = ProcessGroup::Connect(options, &group);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(group->rank(), options.rank);
  ASSERT_EQ(group->size(), options.world_size);
  const std::string scenario = ChildEnv("BRAID_PG_SCENARIO");
  if (scenario == "allreduce") {
    ExpectExactSums(*group);
  } else if (scenario == "share") {
    ExpectSharedValues(*group);
  } else if (scenario == "allreduce_and_share") {
    ExpectExactSums(*group);
    ExpectSharedValues(*group);
  } else if (scenario == "peer_dies") {
    ExpectPeerLossIsAnError(*group);
  } else if (scenario == "peer_stops") {
    ExpectStuckPeerIsAnUnnamedTimeout(*group);
  } else {
    FAIL() << "unknown scenario '" << scenario << "'";
  }
}

std::map<std::string, std::string> RankEnv(int rank, int world, const std::string& url,
                                           const std::string& scenario, int timeout_ms) {
  return {{"BRAID_PG_RANK", std::to_string(rank)},
          {"BRAID_PG_WORLD", std::to_string(world)},
          {"BRAID_PG_URL", url},
          {"BRAID_PG_TIMEOUT_MS", std::to_string(timeout_ms)},
          {"BRAID_PG_SCENARIO", scenario}};
}

// Runs `world` ranks of `scenario` (of `child`) and expects each to exit with `expected(rank)`.
void RunRanks(int world, const std::string& url, const std::string& scenario, int timeout_ms,
              const std::function<int(int)>& expected, const char* child = kChildTest) {
  ChildProcesses children;
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    pids.push_back(children.Spawn(child, RankEnv(r, world, url, scenario, timeout_ms)));
  }
  const auto deadline = Clock::now() + seconds(25);
  for (int r = 0; r < world; ++r) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    EXPECT_EQ(children.Wait(pids[r], std::max(left, milliseconds(1))), expected(r))
        << "rank " << r << " of " << world << " (-1: still running at the deadline)";
  }
}

class ProcessGroupRanksTest : public ::testing::TestWithParam<int> {};

TEST_P(ProcessGroupRanksTest, AllreduceSumIsExactForEverySizeAndAlgorithm) {
  const std::string dir = MakeTempDir("pg_allreduce");
  RunRanks(GetParam(), "file://" + dir, "allreduce", 20000, [](int) { return 0; });
  std::filesystem::remove_all(dir);
}

TEST_P(ProcessGroupRanksTest, KilledPeerIsAnErrorForTheOthersWithinTheTimeout) {
  const std::string dir = MakeTempDir("pg_peer_dies");
  const int world = GetParam();
  RunRanks(world, "file://" + dir, "peer_dies", 3000,
           [world](int r) { return r == world - 1 ? 128 + SIGKILL : 0; });
  std::filesystem::remove_all(dir);
}

// A rank through <braid/process_group.h> alone: connect, a second connect refused, rank and size,
// an exact sum, rank 0's value shared, a barrier, disconnect.
TEST(PublicProcessGroupChild, DISABLED_Rank) {
  const ProcessGroupOptions options = OptionsFromEnv();
  Status s = ConnectProcessGroup(options);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const Status again = ConnectProcessGroup(options);
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition) << again.ToString();
  EXPECT_NE(again.message().find("of job 'pg_test' is connected"), std::string::npos)
      << again.ToString();
  ASSERT_EQ(ProcessRank(), options.rank);
  ASSERT_EQ(ProcessWorldSize(), options.world_size);
  std::vector<float> data = {float(options.rank + 1), 2.f};
  s = ProcessAllreduceSum(data.data(), data.size(), 3, AllreduceAlgorithm::kHalvingDoubling);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const int n = options.world_size;
  EXPECT_EQ(data, (std::vector<float>{float(n * (n + 1) / 2), 2.f * n}));
  std::string value = "rank " + std::to_string(options.rank);
  s = ProcessShareFromRankZero("public_value", &value);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(value, "rank 0");
  s = ProcessBarrier(4);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(DisconnectProcessGroup().ok());
  EXPECT_EQ(ProcessWorldSize(), 1);
}

TEST(PublicProcessGroupTest, RanksConnectSumShareAndDisconnectThroughThePublicApi) {
  const std::string dir = MakeTempDir("pg_public");
  RunRanks(
      3, "file://" + dir, "public", 20000, [](int) { return 0; },
      "PublicProcessGroupChild.DISABLED_Rank");
  std::filesystem::remove_all(dir);
}

TEST(PublicProcessGroupTest, WithoutAGroupCollectivesAreAFailedPrecondition) {
  ASSERT_EQ(CurrentProcessGroup(), nullptr);
  EXPECT_EQ(ProcessRank(), 0);
  EXPECT_EQ(ProcessWorldSize(), 1);
  float x = 1.f;
  const Status s = ProcessAllreduceSum(&x, 1, 0);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("ProcessAllreduceSum: no process group is connected"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(ProcessBarrier(0).code(), StatusCode::kFailedPrecondition);
  std::string value;
  EXPECT_EQ(ProcessShareFromRankZero("k", &value).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(DisconnectProcessGroup().code(), StatusCode::kFailedPrecondition);
  ProcessGroupOptions bad;
  bad.rank = 2;  // of 1
  EXPECT_EQ(ConnectProcessGroup(bad).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CurrentProcessGroup(), nullptr);
}

TEST(ProcessGroupTest, StuckPeerIsATimeoutThatDoesNotGuessTheRank) {
  const std::string dir = MakeTempDir("pg_peer_stops");
  ChildProcesses children;
  const pid_t survivor =
      children.Spawn(kChildTest, RankEnv(0, 2, "file://" + dir, "peer_stops", 3000));
  const pid_t stuck =
      children.Spawn(kChildTest, RankEnv(1, 2, "file://" + dir, "peer_stops", 3000));
  EXPECT_EQ(children.Wait(survivor, seconds(20)), 0);
  children.Kill(stuck, SIGKILL);  // stopped, not dead: killed (and reaped) here
  std::filesystem::remove_all(dir);
}

TEST_P(ProcessGroupRanksTest, ShareFromRankZeroReachesEveryRankAndAnUnsharedKeyTimesOut) {
  const std::string dir = MakeTempDir("pg_share");
  RunRanks(GetParam(), "file://" + dir, "share", 3000, [](int) { return 0; });
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Ranks, ProcessGroupRanksTest, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param) + "Ranks"; });

TEST(ProcessGroupTest, RankThatNeverArrivesFailsAfterTheTimeoutNamingIt) {
  const std::string dir = MakeTempDir("pg_missing");
  ProcessGroupOptions options;
  options.rank = 0;
  options.world_size = 3;
  options.rendezvous = "file://" + dir;
  options.timeout = seconds(2);
  std::unique_ptr<ProcessGroup> group;
  const auto start = Clock::now();
  Status s = ProcessGroup::Connect(options, &group);
  EXPECT_LT(Clock::now() - start, seconds(4));
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_NE(s.message().find("rank(s) 1, 2 of 3 never arrived"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(options.rendezvous), std::string::npos) << s.message();
  EXPECT_EQ(group, nullptr);
  std::filesystem::remove_all(dir);
}

// A loopback port nobody listens on (bound, then released).
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(ProcessGroupTest, UnreachableRedisStoreFailsAfterTheTimeoutNamingTheUrl) {
  ProcessGroupOptions options;
  options.world_size = 2;
  options.rendezvous = "redis://127.0.0.1:" + std::to_string(UnusedPort());
  options.timeout = seconds(1);
  std::unique_ptr<ProcessGroup> group;
  const auto start = Clock::now();
  Status s = ProcessGroup::Connect(options, &group);
  EXPECT_LT(Clock::now() - start, seconds(3));
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_NE(s.message().find("cannot reach the rendezvous store " + options.rendezvous),
            std::string::npos)
      << s.message();
}

TEST(ProcessGroupTest, BadOptionsAreInvalidArguments) {
  std::unique_ptr<ProcessGroup> group;
  ProcessGroupOptions options;
  options.world_size = 2;
  options.rendezvous = "tcp://nowhere";
  EXPECT_NE(ProcessGroup::Connect(options, &group).message().find("file:// or redis://"),
            std::string::npos);
  options.rendezvous = "redis://localhost";
  EXPECT_EQ(ProcessGroup::Connect(options, &group).code(), StatusCode::kInvalidArgument);
  options.rank = 2;
  EXPECT_NE(ProcessGroup::Connect(options, &group).message().find("rank 2 is outside [0, 2)"),
            std::string::npos);
  AllreduceAlgorithm algorithm;
  EXPECT_EQ(ParseAllreduceAlgorithm("tree", &algorithm).code(), StatusCode::kInvalidArgument);
}

TEST(ProcessGroupTest, OneRankNeedsNoPeers) {
  const std::string dir = MakeTempDir("pg_single");
  ProcessGroupOptions options;
  options.rendezvous = "file://" + dir;
  std::unique_ptr<ProcessGroup> group;
  Status s = ProcessGroup::Connect(options, &group);
  ASSERT_TRUE(s.ok()) << s.ToString();
  float x = 3.f;
  EXPECT_TRUE(group->AllreduceSum(&x, 1, 0, AllreduceAlgorithm::kRing).ok());
  EXPECT_EQ(x, 3.f);
  SetProcessGroup(std::move(group));
  EXPECT_NE(CurrentProcessGroup(), nullptr);
  SetProcessGroup(nullptr);
  EXPECT_EQ(CurrentProcessGroup(), nullptr);
  std::filesystem::remove_all(dir);
}

// Caches of per-group state (NCCL cliques) key by id(): a group made where a destroyed one was
// must not inherit its entries.
TEST(ProcessGroupTest, GroupsMadeOneAfterAnotherHaveDistinctIdsWhateverTheirAddress) {
  const std::string dir = MakeTempDir("pg_ids");
  std::set<uint64_t> ids;
  std::set<const ProcessGroup*> addresses;
  for (int i = 0; i < 4; ++i) {
    ProcessGroupOptions options;
    options.rendezvous = "file://" + dir;
    options.job_name = "ids" + std::to_string(i);
    std::unique_ptr<ProcessGroup> group;
    const Status s = ProcessGroup::Connect(options, &group);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(ids.insert(group->id()).second) << "id " << group->id() << " again";
    addresses.insert(group.get());
  }  // each group is destroyed before the next is made: the allocator may reuse its address
  std::cout << "4 groups at " << addresses.size() << " distinct address(es)\n";
  std::filesystem::remove_all(dir);
}

// A Redis server of our own on a free loopback port, when redis-server is installed.
TEST(ProcessGroupTest, RanksMeetAndShareThroughRedis) {
  if (system("command -v redis-server >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "redis-server is not installed (tools/setup.sh installs it)";
  }
  ChildProcesses server;
  const int port = UnusedPort();
  server.SpawnProgram({"redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1",
                       "--save", "", "--appendonly", "no", "--loglevel", "warning"},
                      {});
  // Connect retries until the server accepts; one job name per run keeps runs apart.
  RunRanks(3, "redis://127.0.0.1:" + std::to_string(port), "allreduce_and_share", 5000,
           [](int) { return 0; });
}

}  // namespace
}  // namespace braid
