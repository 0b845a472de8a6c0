#include "ops/common/cublas_library.h"

#include <dlfcn.h>

#include <string>

#include "runtime/status.h"

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

CublasLibrary Load() {
  void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
    ThrowUnavailable(std::string("cannot load ") + kLibrary + ": " + dlerror());
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

const CublasLibrary& Cublas() {
  static const CublasLibrary cublas = Load();  // a failed load throws, and is retried next call
  return cublas;
}

}  // namespace braid
