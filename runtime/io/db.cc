#include "runtime/io/db.h"

#include "braid/status.h"
#include "runtime/io/lmdb_db.h"

namespace braid {

std::unique_ptr<Db> OpenDb(const std::string& type, const std::string& path, DbMode mode) {
  if (type == "lmdb") return OpenLmdb(path, mode);
  throw Error(Status::InvalidArgument("DB '" + path + "': unknown db_type '" + type +
                                      "' (braid reads and writes: lmdb)"));
}

}  // namespace braid
