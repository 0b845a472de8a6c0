#include "runtime/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace braid {
namespace {

Status ErrnoError(const std::string& what, const std::string& path, int error) {
  return Status::IoError("cannot " + what + " '" + path + "': " + std::strerror(error));
}

// The folder that holds `path` ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Writes all of `bytes` to `fd` and flushes it to disk; returns errno, 0 on success.
int WriteAllAndSync(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return ::fsync(fd) == 0 ? 0 : errno;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  // A name no other writer uses: this process's id and a number unique within it. O_EXCL skips a
  // name a crashed process left behind; the file gets the usual mode for new files (0666 & ~umask).
  static std::atomic<uint64_t> next_number{0};
  std::string temp_path;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    temp_path = path + ".tmp." + std::to_string(::getpid()) + "." +
                std::to_string(next_number.fetch_add(1, std::memory_order_relaxed));
    fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    const int error = errno;
    if (fd < 0 && error != EEXIST) return ErrnoError("create", temp_path, error);
  }
  if (fd < 0) return ErrnoError("create", temp_path, EEXIST);
  const int write_error = WriteAllAndSync(fd, bytes);
  const int close_error = ::close(fd) == 0 ? 0 : errno;
  if (write_error != 0 || close_error != 0) {
    ::unlink(temp_path.c_str());
    return ErrnoError("write", temp_path, write_error != 0 ? write_error : close_error);
  }
  if (std::rename(temp_path.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_path.c_str());
    return ErrnoError("rename '" + temp_path + "' to", path, error);
  }
  // The rename is made; flushing the folder makes it survive a power cut. A file system that cannot
  // flush a folder (EINVAL) has nothing more to do.
  const std::string folder = FolderOf(path);
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int sync_error = dir < 0 ? errno : (::fsync(dir) == 0 ? 0 : errno);
  if (dir >= 0) ::close(dir);
  if (sync_error != 0 && sync_error != EINVAL) {
    return ErrnoError("flush the folder '" + folder + "' after writing", path, sync_error);
  }
  return Status::OK();
}

}  // namespace braid
