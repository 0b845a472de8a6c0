#include "runtime/io/idx_file.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "braid/status.h"
#include "runtime/core/dims_text.h"

namespace braid {
namespace {

std::string Prefix(const std::string& path) { return "IDX file '" + path + "': "; }

[[noreturn]] void ThrowInvalid(const std::string& path, const std::string& message) {
  throw Error(Status::InvalidArgument(Prefix(path) + message));
}

// A gzip or raw file opened for reading through zlib, closed on destruction.
class GzipReader {
 public:
  explicit GzipReader(const std::string& path) : path_(path) {
    errno = 0;
    file_ = gzopen(path.c_str(), "rb");
    if (file_ != nullptr) return;
    const int error = errno;
    if (error == ENOENT) throw Error(Status::NotFound(Prefix(path) + "no such file"));
    throw Error(Status::IoError(
        Prefix(path) + "cannot open: " + (error != 0 ? std::strerror(error) : "out of memory")));
  }
  ~GzipReader() { gzclose(file_); }
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  // Reads up to `size` bytes; fewer only at the end of the stream. Throws IoError on a corrupt
  // or truncated gzip stream or a failed read.
  size_t Read(uint8_t* out, size_t size) {
    size_t done = 0;
    while (done < size) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(size - done, INT_MAX / 2));
      const int got = gzread(file_, out + done, chunk);
      if (got < 0) ThrowStreamError();
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    int code = Z_OK;
    gzerror(file_, &code);
    if (code != Z_OK) ThrowStreamError();
    return done;
  }

 private:
  [[noreturn]] void ThrowStreamError() {
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    std::string cause = code == Z_ERRNO ? std::strerror(errno) : message;
    if (code == Z_BUF_ERROR) cause = "gzip stream is truncated (" + cause + ")";
    if (code == Z_DATA_ERROR) cause = "gzip stream is corrupt (" + cause + ")";
    throw Error(Status::IoError(Prefix(path_) + "read failed: " + cause));
  }

  std::string path_;
  gzFile file_ = nullptr;
};

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Reads and checks the magic and dims; returns the dims.
std::vector<int64_t> ReadHeader(const std::string& path, GzipReader* reader) {
  uint8_t magic[4];
  const size_t got = reader->Read(magic, 4);
  if (got < 4) {
    ThrowInvalid(path, "truncated header: " + std::to_string(got) + " bytes, an IDX magic needs 4");
  }
  if (magic[0] != 0 || magic[1] != 0) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%02x %02x", magic[0], magic[1]);
    ThrowInvalid(
        path, std::string("bad magic: starts with bytes ") + hex + ", not 00 00 (not an IDX file)");
  }
  if (magic[2] != IdxFile::kUnsignedByte) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02x", magic[2]);
    ThrowInvalid(path, std::string("element type ") + hex +
                           " is not supported; only unsigned byte (0x08) is");
  }
  const int ndim = magic[3];
  if (ndim < 1) ThrowInvalid(path, "header declares 0 dims");
  std::vector<uint8_t> raw(4 * static_cast<size_t>(ndim));
  if (reader->Read(raw.data(), raw.size()) < raw.size()) {
    ThrowInvalid(path, "truncated header: it declares " + std::to_string(ndim) +
                           " dims but the file ends before them");
  }
  std::vector<int64_t> dims;
  int64_t elements = 1;
  for (int i = 0; i < ndim; ++i) {
    const int64_t dim = BigEndian32(raw.data() + 4 * i);
    if (dim <= 0 || dim > IdxFile::kMaxBytes / elements) {
      ThrowInvalid(path, "dim " + std::to_string(i) + " is " + std::to_string(dim) +
                             (dim <= 0 ? "; dims must be positive"
                                       : "; the data would exceed the size limit"));
    }
    elements *= dim;
    dims.push_back(dim);
  }
  return dims;
}

}  // namespace

IdxFile IdxFile::Load(const std::string& path) {
  GzipReader reader(path);
  std::vector<int64_t> dims = ReadHeader(path, &reader);
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  std::vector<uint8_t> bytes(static_cast<size_t>(elements));
  const size_t got = reader.Read(bytes.data(), bytes.size());
  IdxFile file(path, std::move(dims), std::move(bytes));
  if (got < file.bytes_.size()) {
    ThrowInvalid(path, "truncated: dims " + DimsText(file.dims()) + " need " +
                           std::to_string(elements) + " bytes of data, the file has " +
                           std::to_string(got));
  }
  uint8_t extra;
  if (reader.Read(&extra, 1) != 0) {
    ThrowInvalid(path, "has more data than its dims " + DimsText(file.dims()) + " describe (" +
                           std::to_string(elements) + " bytes)");
  }
  return file;
}

}  // namespace braid
