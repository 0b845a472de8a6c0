// Db: a sorted key/value store of records, opened by type and path (Caffe2's DB, db.h).
//
// braid reads and writes one type, "lmdb" (Debian's liblmdb; runtime/io/lmdb_db.h). A DB is
// opened in one of three modes: kRead (an existing DB, read only), kWrite (an existing DB, to add
// or replace records), kNew (creates the DB; the path must not exist yet). Records are read with
// a cursor, in key order, and written through a transaction whose puts land together at Commit.
//
//   std::unique_ptr<Db> db = OpenDb("lmdb", "/tmp/train_lmdb", DbMode::kNew);
//   std::unique_ptr<DbTransaction> txn = db->NewTransaction();
//   txn->Put("00000000", record);   // ... more puts
//   txn->Commit();                  // every put since the last commit, at once
//
//   std::unique_ptr<DbCursor> cursor = OpenDb("lmdb", path, DbMode::kRead)->NewCursor();
//   for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) use(cursor->value());
//
// Errors throw braid::Error naming the DB's type and path and the library's own text
// (mdb_strerror): NotFound for a DB that does not exist, InvalidArgument for an unknown type or a
// kNew path that exists, IoError for anything the library refuses (a corrupt file, a full map).
//
// Ownership and threads: a cursor or transaction keeps its DB open (it shares ownership of what
// the Db opened), so it may outlive the Db object. A Db may be shared by
// threads; each cursor is used by one thread at a time (any thread), each transaction by the
// thread that opened it, which also destroys it (LMDB's write lock belongs to that thread; Put or
// Commit from another is FailedPrecondition). A DB opened for reading must not be written by
// anyone meanwhile (Caffe2's use: a tool writes it once, then nets read it); several readers, in
// this process or others, are fine. A Db opened for writing has at most one transaction at a
// time (a second NewTransaction is FailedPrecondition, not a wait), and while one of its cursors
// is open a transaction whose map must grow fails (FailedPrecondition, its puts since the last
// commit lost) instead of growing under the cursor.
#ifndef BRAID_RUNTIME_IO_DB_H_
#define BRAID_RUNTIME_IO_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace braid {

enum class DbMode { kRead, kWrite, kNew };

// A position in a DB's records, in key order. key() and value() are valid while the cursor stays
// at the record (they may point into the DB's memory map: no copy).
class DbCursor {
 public:
  virtual ~DbCursor() = default;
  virtual void SeekToFirst() = 0;
  // To the first record whose key is >= `key` (invalid when there is none).
  virtual void Seek(std::string_view key) = 0;
  virtual void Next() = 0;
  virtual bool Valid() const = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
};

// Puts that become visible together at Commit; after Commit, the transaction takes new puts.
// Destroying it abandons the puts since the last Commit.
class DbTransaction {
 public:
  virtual ~DbTransaction() = default;
  virtual void Put(std::string_view key, std::string_view value) = 0;
  virtual void Commit() = 0;
};

class Db {
 public:
  virtual ~Db() = default;
  // "lmdb '/tmp/train_lmdb'": how errors name the DB.
  virtual std::string Name() const = 0;
  // The number of records.
  virtual int64_t Count() const = 0;
  virtual std::unique_ptr<DbCursor> NewCursor() = 0;
  // kWrite and kNew DBs only (InvalidArgument for a DB opened with kRead).
  virtual std::unique_ptr<DbTransaction> NewTransaction() = 0;
};

// Opens the DB of `type` ("lmdb") at `path`.
std::unique_ptr<Db> OpenDb(const std::string& type, const std::string& path, DbMode mode);

}  // namespace braid

#endif  // BRAID_RUNTIME_IO_DB_H_
