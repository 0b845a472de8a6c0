#include "ops/common/cublas_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "braid/status.h"

namespace braid {
namespace {

#define BRAID_STRINGIFY_VALUE(x) #x
#define BRAID_STRINGIFY(x) BRAID_STRINGIFY_VALUE(x)
constexpr char kLibrary[] = "libcublas.so." BRAID_STRINGIFY(CUBLAS_VER_MAJOR);

[[noreturn]] void ThrowUnavailable(const std::string& what) {
  throw Error(Status::NotFound("cuBLAS: " + what + " (braid loads " + kLibrary +
                               " when a CUDA kernel first needs it)"));
}

template <typename Function>
void Resolve(void* library, const char* name, Function* function) {
  *function = reinterpret_cast<Function>(dlsym(library, name));
  if (*function == nullptr) ThrowUnavailable(std::string(kLibrary) + " lacks " + name);
}

void* Open() {
  std::string tried;
  for (const std::string& path : CublasSearchPaths(std::getenv("BRAID_CUDA_LIBS"))) {
    if (void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
    tried += (tried.empty() ? "" : "; ") + std::string(dlerror());
  }
  ThrowUnavailable(std::string("cannot load ") + kLibrary +
                   " from BRAID_CUDA_LIBS, the loader's search or /usr/local/cuda/lib64: " + tried);
}

CublasLibrary Load() {
  void* library = Open();
  CublasLibrary cublas;
  // The names the cublas_v2.h macros map the calls to.
  Resolve(library, "cublasCreate_v2", &cublas.create);
  Resolve(library, "cublasSetStream_v2", &cublas.set_stream);
  Resolve(library, "cublasSetWorkspace_v2", &cublas.set_workspace);
  Resolve(library, "cublasSetMathMode", &cublas.set_math_mode);
  Resolve(library, "cublasSetPointerMode_v2", &cublas.set_pointer_mode);
  Resolve(library, "cublasSgemm_v2", &cublas.sgemm);
  Resolve(library, "cublasGetStatusString", &cublas.status_string);
  return cublas;  // the library stays loaded for the process's life
}

}  // namespace

std::vector<std::string> CublasSearchPaths(const char* braid_cuda_libs) {
  std::vector<std::string> paths;
  std::istringstream directories(braid_cuda_libs == nullptr ? "" : braid_cuda_libs);
  for (std::string directory; std::getline(directories, directory, ':');)
    if (!directory.empty()) paths.push_back(directory + "/" + kLibrary);
  paths.push_back(kLibrary);  // LD_LIBRARY_PATH, libbraid's RUNPATH, ld.so.cache
  paths.push_back(std::string("/usr/local/cuda/lib64/") + kLibrary);
  return paths;
}

const CublasLibrary& Cublas() {
  static const CublasLibrary cublas = Load();  // a failed load throws, and is retried next call
  return cublas;
}

}  // namespace braid
