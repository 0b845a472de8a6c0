// WriteFileAtomically: a file that is either its old content or all of its new content, never a
// part, even across a crash or a power cut, and never another writer's half.
//
// The bytes go to a temporary file with a unique name beside `path` (the process id and a counter:
// two writers of one path, in one process or many, never share a temporary), which is flushed to
// disk (fsync), renamed over `path`, and the folder is flushed so that the rename survives a power
// cut. When writing or renaming fails the temporary is removed and `path` is untouched; when only
// flushing the folder fails, the new file is in place (the error says so). A process killed while
// writing leaves its temporary (`path`.tmp.PID.N) behind; removing it is safe. Checkpoints
// (SaveProto), .npy files and the algorithm cache write through here.
//
//   Status s = WriteFileAtomically("/ckpt/run.pb", bytes);   // IoError naming the path and errno
//
// Thread safety: any number of threads may write, one path or many; the last rename wins whole.
#ifndef BRAID_RUNTIME_IO_ATOMIC_FILE_H_
#define BRAID_RUNTIME_IO_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "braid/status.h"

namespace braid {

Status WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_ATOMIC_FILE_H_
