// Cublas(): the cuBLAS entry points braid's CUDA kernels call, resolved from libcublas.so.<major>
// the first time a kernel needs one, not linked.
//
// Linking cuBLAS costs every braid process about 150 MB of resident memory when it starts
// (libcublasLt's static data is touched at load), CPU-only ones included; loading it on first use
// leaves that cost to processes that run an FC on a GPU.
//
//   CheckCublas(Cublas().sgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, ...), "cublasSgemm");
//
// The library is looked for in CublasSearchPaths(getenv("BRAID_CUDA_LIBS")) order: each directory
// of BRAID_CUDA_LIBS (colon-separated; the package's bin/braid-env sets it), then the loader's own
// search (LD_LIBRARY_PATH, libbraid's RUNPATH, ld.so.cache), then /usr/local/cuda/lib64.
// Throws braid::Error (NotFound) naming the library and each place's loader message when libcublas
// or one of its functions cannot be found. Thread-safe: resolved once, then read-only.
#ifndef BRAID_OPS_COMMON_CUBLAS_LIBRARY_H_
#define BRAID_OPS_COMMON_CUBLAS_LIBRARY_H_

#include <cublas_v2.h>

#include <string>
#include <vector>

namespace braid {

struct CublasLibrary {
  decltype(&cublasCreate) create;
  decltype(&cublasSetStream) set_stream;
  decltype(&cublasSetWorkspace) set_workspace;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSetPointerMode) set_pointer_mode;
  decltype(&cublasSgemm) sgemm;
  decltype(&cublasGetStatusString) status_string;
};

const CublasLibrary& Cublas();

// What Cublas() passes to dlopen, in order, given BRAID_CUDA_LIBS's value (null when unset):
// "DIR/libcublas.so.<major>" per non-empty DIR, the bare name, the toolkit's default path.
std::vector<std::string> CublasSearchPaths(const char* braid_cuda_libs);

}  // namespace braid

#endif  // BRAID_OPS_COMMON_CUBLAS_LIBRARY_H_
