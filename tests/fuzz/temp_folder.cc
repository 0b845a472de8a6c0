#include "fuzz/temp_folder.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace braid::fuzz {
namespace {

void RemoveFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(TempPath(""), ignored);
}

}  // namespace

std::string TempPath(const std::string& name) {
  // Never destroyed: RemoveFolder reads it at exit.
  static const std::string* const folder = [] {
    const std::filesystem::path root = std::filesystem::is_directory("/dev/shm")
                                           ? "/dev/shm"
                                           : std::filesystem::temp_directory_path();
    const std::filesystem::path dir = root / ("braid_fuzz_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    auto* path = new std::string(dir.string());
    std::atexit(RemoveFolder);
    return path;
  }();
  return *folder + "/" + name;
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file.flush()) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

}  // namespace braid::fuzz
