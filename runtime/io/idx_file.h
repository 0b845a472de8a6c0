// IdxFile: one unsigned-byte array read from an IDX file, the format of MNIST and Fashion-MNIST.
//
// An IDX file is a 4-byte magic (two zero bytes, a type code, the number of dims), the dims as
// big-endian uint32, then the elements in row-major order. Load reads gzip-compressed (.gz) and
// raw files alike (zlib detects which), checks the magic, the type (only 0x08, unsigned byte, is
// supported), that every dim is positive and that the data holds exactly the elements the dims
// promise. Any problem throws braid::Error naming the path: NotFound for a missing file, IoError
// for an unreadable or corrupt gzip stream, InvalidArgument for a bad header or a truncated or
// over-long body.
//
//   IdxFile images = IdxFile::Load("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz");
//   images.dims();         // {10000, 28, 28}
//   images.bytes()[0];     // the first pixel of the first image
//
// Thread safety: Load may run on any thread; an IdxFile is an immutable value afterwards.
#ifndef BRAID_RUNTIME_IO_IDX_FILE_H_
#define BRAID_RUNTIME_IO_IDX_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace braid {

class IdxFile {
 public:
  // The IDX type code of unsigned bytes, the only element type Load accepts.
  static constexpr uint8_t kUnsignedByte = 0x08;
  // Load refuses files whose body would exceed this many bytes (a corrupt header, not data).
  static constexpr int64_t kMaxBytes = int64_t{1} << 33;

  static IdxFile Load(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int i) const { return dims_.at(i); }
  int ndim() const { return static_cast<int>(dims_.size()); }
  // The elements, row-major; size() is the product of dims().
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  IdxFile(std::string path, std::vector<int64_t> dims, std::vector<uint8_t> bytes)
      : path_(std::move(path)), dims_(std::move(dims)), bytes_(std::move(bytes)) {}

  std::string path_;
  std::vector<int64_t> dims_;
  std::vector<uint8_t> bytes_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_IDX_FILE_H_
