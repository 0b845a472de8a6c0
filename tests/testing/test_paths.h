// Where a test finds braid's binaries and the data it reads, in the build tree and in the
// relocatable package alike.
//
// In the build tree these are the absolute paths CMake compiles in (BRAID_TRAIN_BINARY,
// BRAID_ONNX_FIXTURES, ...). In the package (tools/package.sh) the test executables sit in
// <root>/tests/, the binaries in <root>/bin/ and the data where it is in the repository
// (<root>/tests/data/...): there a test resolves the same names under its package root, which is
// BRAID_PACKAGE_ROOT when set, else the folder above the running executable when that folder holds
// bin/braid-env (only packages do). So a packaged test never reaches into a build tree, even on the
// machine that built it.
//
//   RunCommand(BraidBinary(BRAID_TRAIN_BINARY) + " --iters 2");        // <root>/bin/braid_train
//   const std::string fixtures = TestData(BRAID_ONNX_FIXTURES, "tests/data/onnx");
//
// Thread-safe (reads the environment and /proc/self/exe).
#ifndef BRAID_TESTS_TESTING_TEST_PATHS_H_
#define BRAID_TESTS_TESTING_TEST_PATHS_H_

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace braid::testing {

// The package this test executable runs from, or "" in the build tree.
inline std::string PackageRoot() {
  if (const char* root = std::getenv("BRAID_PACKAGE_ROOT"); root != nullptr && *root != '\0')
    return root;
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "";
  const std::filesystem::path root = exe.parent_path().parent_path();
  return std::filesystem::exists(root / "bin" / "braid-env", error) ? root.string() : "";
}

// A braid binary: `build_path` in the build tree, <root>/bin/<its file name> in a package.
inline std::string BraidBinary(const std::string& build_path) {
  const std::string root = PackageRoot();
  if (root.empty()) return build_path;
  return (std::filesystem::path(root) / "bin" / std::filesystem::path(build_path).filename())
      .string();
}

// Test data: `build_path` in the build tree, <root>/<package_path> in a package.
inline std::string TestData(const std::string& build_path, const std::string& package_path) {
  const std::string root = PackageRoot();
  return root.empty() ? build_path : (std::filesystem::path(root) / package_path).string();
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_TEST_PATHS_H_
