// NumPy's .npy files: one array per file, the format numpy.save writes and numpy.load reads.
//
// A file is the magic "\x93NUMPY", a version (1.0, 2.0 or 3.0), the header's length (2 bytes
// little endian in 1.0, 4 in 2.0/3.0), an ASCII header that is a Python dict literal
//
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), }
//
// padded with spaces and a newline, then the elements. braid reads and writes C-order,
// little-endian arrays of float32 ('<f4'), float64 ('<f8'), int32 ('<i4'), int64 ('<i8'), uint8
// ('|u1') and bool ('|b1'); a Fortran-order array, a big-endian one or any other dtype is refused
// with an error naming the file and what it holds. Writing uses version 1.0 (2.0 when the header
// needs it), as numpy does.
//
//   Tensor image;
//   Status s = ReadNpyFile("cat.npy", &image);  // float32[1,3,224,224] on the host
//   s = WriteNpyFile("prob.npy", prob);         // prob must be a plain host tensor
//
// The same for host arrays of bytes (NpyArray) is public: <braid/model_io.h>.
//
// Thread safety: the functions are pure apart from the file they name; calls may run concurrently.
#ifndef BRAID_RUNTIME_IO_NPY_FILE_H_
#define BRAID_RUNTIME_IO_NPY_FILE_H_

#include <string>

#include "braid/status.h"
#include "runtime/core/tensor.h"

namespace braid {

// Parses the bytes of a .npy file into `tensor` (resized, on the host); `source` names the bytes in
// errors (a path, or "<bytes>").
Status ParseNpy(const std::string& bytes, const std::string& source, Tensor* tensor);
Status ReadNpyFile(const std::string& path, Tensor* tensor);

// The bytes of a .npy file holding `tensor` (a host tensor in the plain layout).
Status NpyBytes(const Tensor& tensor, std::string* bytes);
// Writes atomically (runtime/io/atomic_file.h): the old file or all of the new one, never a part.
Status WriteNpyFile(const std::string& path, const Tensor& tensor);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_NPY_FILE_H_
