#include "runtime/io/atomic_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/tensor.h"
#include "runtime/io/npy_file.h"
#include "runtime/io/proto_io.h"

namespace braid {
namespace {

std::string FreshFolder(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/atomic_file_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

TEST(AtomicFileTest, ReplacesTheFileWholeAndLeavesNoTemporary) {
  const std::string dir = FreshFolder("replace");
  const std::string path = dir + "/f.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new content").ok());
  EXPECT_EQ(ReadAll(path), "new content");
  EXPECT_EQ(FilesIn(dir), std::vector<std::string>{"f.txt"});
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);  // the mode any new file gets
}

TEST(AtomicFileTest, AFolderThatDoesNotExistIsAnIoErrorNamingThePath) {
  const std::string path = FreshFolder("missing") + "/no/such/folder/f.txt";
  const Status s = WriteFileAtomically(path, "x");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("No such file"), std::string::npos) << s.ToString();
}

// A rename that fails (the path is a folder) leaves the path as it was and no temporary behind.
TEST(AtomicFileTest, AFailedRenameRemovesTheTemporary) {
  const std::string dir = FreshFolder("rename");
  std::filesystem::create_directories(dir + "/taken/inside");
  const Status s = WriteFileAtomically(dir + "/taken", "x");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("rename"), std::string::npos) << s.ToString();
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/taken/inside"));
  EXPECT_EQ(FilesIn(dir), std::vector<std::string>{"taken"});
}

// Writers of one path in many threads: every write succeeds, the file is always one writer's whole
// content, and no temporary is left (with one fixed temporary name, writers renamed each other's
// half-written files or failed to rename).
TEST(AtomicFileTest, ConcurrentWritersOfOnePathNeverMixOrFail) {
  const std::string dir = FreshFolder("concurrent");
  constexpr int kThreads = 8;
  constexpr int kWrites = 25;
  std::vector<std::string> contents;
  for (int t = 0; t < kThreads; ++t) contents.push_back(std::string(64 << 10, 'a' + t));
  const std::string npy = dir + "/t.npy";
  const std::string proto = dir + "/n.pbtxt";
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Tensor tensor;
      tensor.Resize(DType::kUInt8, {static_cast<int64_t>(contents[t].size())});
      std::copy(contents[t].begin(), contents[t].end(), tensor.mutable_data<uint8_t>());
      NetDef net;
      net.set_name(contents[t].substr(0, 1000));
      for (int i = 0; i < kWrites; ++i) {
        if (!WriteFileAtomically(dir + "/raw", contents[t]).ok()) ++failures[t];
        if (!WriteNpyFile(npy, tensor).ok()) ++failures[t];
        try {
          SaveProto(net, proto);
        } catch (const Error&) {
          ++failures[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  const std::string raw = ReadAll(dir + "/raw");
  EXPECT_TRUE(std::find(contents.begin(), contents.end(), raw) != contents.end());
  Tensor tensor;
  ASSERT_TRUE(ReadNpyFile(npy, &tensor).ok());
  ASSERT_EQ(tensor.numel(), 64 << 10);
  const uint8_t* data = tensor.data<uint8_t>();
  EXPECT_EQ(std::count(data, data + tensor.numel(), data[0]), tensor.numel());
  const NetDef net = LoadNetDef(proto);
  EXPECT_EQ(net.name(), std::string(1000, net.name()[0]));
  std::vector<std::string> names = FilesIn(dir);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"n.pbtxt", "raw", "t.npy"}));
}

}  // namespace
}  // namespace braid
