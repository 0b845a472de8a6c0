// Where Cublas() (ops/common/cublas_library.h) loads cuBLAS from: each BRAID_CUDA_LIBS directory
// first (what the relocatable package's bin/braid-env sets), then the loader's search, then the
// toolkit's default path. Loading cuBLAS needs no GPU, so this runs wherever the toolkit is
// installed; the load runs in a child process, so that no other test's earlier load decides it.
#include <gtest/gtest.h>

#if BRAID_WITH_CUDA
#include <dlfcn.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ops/common/cublas_library.h"
#include "testing/child_processes.h"

namespace braid::test {
namespace {

using braid::testing::ChildEnv;
using braid::testing::ChildProcesses;
using braid::testing::MakeTempDir;

TEST(CublasLibrary, SearchesBraidCudaLibsThenTheLoaderThenTheToolkit) {
  const std::vector<std::string> plain = CublasSearchPaths(nullptr);
  ASSERT_EQ(plain.size(), 2u);
  const std::string name = plain[0];  // libcublas.so.<major>
  EXPECT_EQ(name.rfind("libcublas.so.", 0), 0u) << name;
  EXPECT_EQ(plain[1], "/usr/local/cuda/lib64/" + name);
  EXPECT_EQ(CublasSearchPaths("/wheels/nvidia/cu13/lib::/opt/cuda/lib:"),
            (std::vector<std::string>{"/wheels/nvidia/cu13/lib/" + name, "/opt/cuda/lib/" + name,
                                      name, "/usr/local/cuda/lib64/" + name}));
}

// Run by LoadsFromTheFirstBraidCudaLibsDirectoryThatHoldsIt with BRAID_CUDA_LIBS set.
TEST(CublasLibraryChild, DISABLED_LoadsFrom) {
  const void* sgemm = reinterpret_cast<const void*>(Cublas().sgemm);
  Dl_info info{};
  ASSERT_NE(dladdr(sgemm, &info), 0);
  EXPECT_EQ(std::string(info.dli_fname), ChildEnv("BRAID_TEST_EXPECTED_CUBLAS"));
}

TEST(CublasLibrary, LoadsFromTheFirstBraidCudaLibsDirectoryThatHoldsIt) {
  const std::string toolkit_copy = CublasSearchPaths(nullptr).back();
  // The package test hides the toolkit's libraries behind /dev/null: there, as without a toolkit,
  // there is nothing to load.
  char magic[4] = {};
  std::ifstream(toolkit_copy, std::ios::binary).read(magic, sizeof magic);
  if (std::string(magic, sizeof magic) !=
      "\x7f"
      "ELF") {
    GTEST_SKIP() << "no shared library at " << toolkit_copy;
  }
  // A directory of its own holding cuBLAS (a link to the toolkit's), after one that does not:
  // the loader's search would find the toolkit's path instead.
  const std::filesystem::path dir = MakeTempDir("cublas_search");
  const std::filesystem::path copy = dir / "wheel" / std::filesystem::path(toolkit_copy).filename();
  std::filesystem::create_directories(copy.parent_path());
  std::filesystem::create_symlink(toolkit_copy, copy);
  ChildProcesses children;
  const pid_t child = children.Spawn(
      "CublasLibraryChild.DISABLED_LoadsFrom",
      {{"BRAID_CUDA_LIBS", (dir / "empty").string() + ":" + copy.parent_path().string()},
       {"BRAID_TEST_EXPECTED_CUBLAS", copy.string()}});
  EXPECT_EQ(children.Wait(child, std::chrono::seconds(60)), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace braid::test
#endif  // BRAID_WITH_CUDA
