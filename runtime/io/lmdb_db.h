// The "lmdb" Db (runtime/io/db.h) over Debian's liblmdb: a directory holding data.mdb, as
// Caffe2 writes it.
//
//   std::unique_ptr<Db> db = OpenLmdb("/tmp/train_lmdb", DbMode::kRead);
//
// A writer's memory map grows as records are written (it doubles when full, replaying the puts
// since the last commit, which a transaction keeps until then); a reader's is the DB's size.
// Readers open the DB read-only and without LMDB's lock file (MDB_NOLOCK), so a DB in a
// read-only folder reads, and one process may open the same DB twice (LMDB forbids that with
// locks); the price is db.h's rule: nobody writes a DB while it is read. Cursors hold their own
// read transaction (MDB_NOTLS: usable from any thread, one at a time).
//
// Errors and thread safety: as runtime/io/db.h says.
#ifndef BRAID_RUNTIME_IO_LMDB_DB_H_
#define BRAID_RUNTIME_IO_LMDB_DB_H_

#include <memory>
#include <string>

#include "runtime/io/db.h"

namespace braid {

std::unique_ptr<Db> OpenLmdb(const std::string& path, DbMode mode);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_LMDB_DB_H_
