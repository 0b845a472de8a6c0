#include "runtime/io/lmdb_db.h"

#include <lmdb.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "braid/status.h"

namespace braid {
namespace {

// A writer's map starts at 256 MiB and doubles whenever it is full; readers ask for less than any
// DB holds, which LMDB raises to the DB's size. (Caffe2 maps 1 TiB: address space that several
// DBs open at once under ThreadSanitizer do not get.)
constexpr size_t kWriterMapBytes = size_t{256} << 20;
constexpr size_t kReaderMapBytes = size_t{1} << 20;

std::string DbName(const std::string& path) { return "lmdb '" + path + "'"; }

[[noreturn]] void ThrowLmdb(const std::string& path, const char* call, int rc) {
  throw Error(Status::IoError(DbName(path) + ": " + call + " failed: " + mdb_strerror(rc)));
}

void Check(const std::string& path, const char* call, int rc) {
  if (rc != MDB_SUCCESS) ThrowLmdb(path, call, rc);
}

MDB_val Val(std::string_view bytes) {
  return MDB_val{bytes.size(), const_cast<char*>(bytes.data())};  // LMDB does not write it
}

// A DB's path is a directory (Caffe2's layout); checks it exists (kRead, kWrite) or creates it.
void PrepareDirectory(const std::string& path, DbMode mode) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (mode == DbMode::kNew) {
    if (exists) {
      throw Error(Status::InvalidArgument(DbName(path) + " already exists (a new DB is " +
                                          "written to a path that does not exist yet)"));
    }
    if (mkdir(path.c_str(), 0755) != 0) {
      throw Error(Status::IoError(DbName(path) + ": cannot create the directory: " +
                                  std::strerror(errno)));
    }
    return;
  }
  if (!exists) throw Error(Status::NotFound(DbName(path) + " does not exist"));
  if (!std::filesystem::is_directory(path, ec)) {
    throw Error(Status::InvalidArgument(DbName(path) + " is not a directory (an LMDB is a " +
                                        "directory holding data.mdb)"));
  }
}

// An open environment and its database; cursors and transactions share it with their Db, so
// that each keeps it open as long as it lives. It counts them, for what LMDB forbids: a second
// write transaction (it would wait for the first forever, a hang in one thread) and growing the
// map while any transaction (a cursor's) is open. map_mu makes a growth and a cursor's start
// exclude each other: a cursor counts itself, under map_mu, before its read transaction begins,
// and a growth checks the count and resizes under map_mu.
struct LmdbEnv {
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  mutable std::mutex map_mu;
  mutable int cursors = 0;                   // LmdbCursors alive or starting; guarded by map_mu
  mutable std::atomic<bool> writing{false};  // an LmdbTransaction is alive
  ~LmdbEnv() {
    if (env != nullptr) mdb_env_close(env);
  }
};

class LmdbCursor final : public DbCursor {
 public:
  LmdbCursor(std::shared_ptr<const LmdbEnv> env, std::string path)
      : env_(std::move(env)), path_(std::move(path)) {
    std::lock_guard<std::mutex> lock(env_->map_mu);
    int rc = mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &txn_);
    if (rc != MDB_SUCCESS) ThrowLmdb(path_, "mdb_txn_begin", rc);
    rc = mdb_cursor_open(txn_, env_->dbi, &cursor_);
    if (rc != MDB_SUCCESS) {
      mdb_txn_abort(txn_);
      ThrowLmdb(path_, "mdb_cursor_open", rc);
    }
    ++env_->cursors;
  }
  ~LmdbCursor() override {
    mdb_cursor_close(cursor_);
    mdb_txn_abort(txn_);
    std::lock_guard<std::mutex> lock(env_->map_mu);
    --env_->cursors;
  }

  void SeekToFirst() override { Move(MDB_FIRST); }
  void Seek(std::string_view key) override {
    key_ = Val(key);
    Move(MDB_SET_RANGE);
  }
  void Next() override { Move(MDB_NEXT); }
  bool Valid() const override { return valid_; }
  std::string_view key() const override {
    return {static_cast<const char*>(key_.mv_data), key_.mv_size};
  }
  std::string_view value() const override {
    return {static_cast<const char*>(value_.mv_data), value_.mv_size};
  }

 private:
  void Move(MDB_cursor_op op) {
    const int rc = mdb_cursor_get(cursor_, &key_, &value_, op);
    if (rc == MDB_NOTFOUND) {
      valid_ = false;
      return;
    }
    Check(path_, "mdb_cursor_get", rc);
    valid_ = true;
  }

  const std::shared_ptr<const LmdbEnv> env_;
  const std::string path_;
  MDB_txn* txn_ = nullptr;
  MDB_cursor* cursor_ = nullptr;
  MDB_val key_{}, value_{};
  bool valid_ = false;
};

class LmdbTransaction final : public DbTransaction {
 public:
  LmdbTransaction(std::shared_ptr<const LmdbEnv> env, std::string path)
      : env_(std::move(env)), path_(std::move(path)) {
    if (env_->writing.exchange(true)) {
      throw Error(Status::FailedPrecondition(
          DbName(path_) + ": a transaction of this DB is open; LMDB writes through one at a " +
          "time (commit and destroy it first)"));
    }
    try {
      Begin();
    } catch (...) {
      env_->writing = false;
      throw;
    }
  }
  ~LmdbTransaction() override {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
    env_->writing = false;
  }

  void Put(std::string_view key, std::string_view value) override {
    CheckUsable();
    std::pair<std::string, std::string> record(key, value);
    const int rc = PutOne(record);  // throws (and leaves nothing pending) on another failure
    pending_.push_back(std::move(record));
    if (rc == MDB_MAP_FULL) GrowOrBreak();
  }
  void Commit() override {
    CheckUsable();
    for (;;) {
      const int rc = mdb_txn_commit(txn_);
      txn_ = nullptr;  // committed or, on failure, freed by LMDB
      if (rc != MDB_MAP_FULL) {
        if (rc != MDB_SUCCESS) {
          Break(std::string("a commit failed: ") + mdb_strerror(rc));
          Check(path_, "mdb_txn_commit", rc);
        }
        break;
      }
      GrowOrBreak();
    }
    pending_.clear();
    Begin();
  }

 private:
  // A transaction that lost puts (a failed commit or growth) refuses later calls rather than
  // write a partial DB. LMDB's write lock belongs to the thread that began the transaction, so
  // the transaction stays on the thread that opened it.
  void CheckUsable() const {
    if (!broken_.empty()) {
      throw Error(Status::FailedPrecondition(DbName(path_) + ": " + broken_ +
                                             "; this transaction is over"));
    }
    if (std::this_thread::get_id() != owner_) {
      throw Error(Status::FailedPrecondition(
          DbName(path_) + ": a transaction is used on the thread that opened it (LMDB's write " +
          "lock belongs to that thread)"));
    }
  }
  // Ends the transaction: its puts since the last commit are dropped, later calls refused.
  void Break(std::string why) {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
    txn_ = nullptr;
    pending_.clear();
    pending_.shrink_to_fit();
    broken_ = std::move(why);
  }
  void GrowOrBreak() {
    try {
      Grow();
    } catch (const Error& e) {
      Break("the map could not grow: " + e.status().message());
      throw;
    }
  }
  // mdb_put's result: success or a full map; any other failure throws.
  int PutOne(const std::pair<std::string, std::string>& record) {
    MDB_val k = Val(record.first), v = Val(record.second);
    const int rc = mdb_put(txn_, env_->dbi, &k, &v, 0);
    if (rc != MDB_SUCCESS && rc != MDB_MAP_FULL) {
      throw Error(Status::IoError(DbName(path_) + ": mdb_put of key '" + record.first +
                                  "' failed: " + mdb_strerror(rc)));
    }
    return rc;
  }
  // The map is full: doubles it (only while no transaction is open: none of this env's cursors,
  // checked under map_mu) and replays the puts since the last commit into a new transaction,
  // until they fit.
  void Grow() {
    for (;;) {
      if (txn_ != nullptr) mdb_txn_abort(txn_);
      txn_ = nullptr;
      {
        std::lock_guard<std::mutex> lock(env_->map_mu);
        if (env_->cursors > 0) {
          throw Error(Status::FailedPrecondition(
              DbName(path_) + ": the map is full and must grow, which LMDB allows only while no " +
              "cursor of this DB is open (" + std::to_string(env_->cursors) + " are); the puts " +
              "since the last commit are lost"));
        }
        MDB_envinfo info;
        Check(path_, "mdb_env_info", mdb_env_info(env_->env, &info));
        Check(path_, "mdb_env_set_mapsize", mdb_env_set_mapsize(env_->env, info.me_mapsize * 2));
      }
      Begin();
      bool full = false;
      for (const auto& record : pending_) {
        if (PutOne(record) == MDB_MAP_FULL) {
          full = true;
          break;
        }
      }
      if (!full) return;
    }
  }

  void Begin() { Check(path_, "mdb_txn_begin", mdb_txn_begin(env_->env, nullptr, 0, &txn_)); }

  const std::shared_ptr<const LmdbEnv> env_;
  const std::string path_;
  const std::thread::id owner_ = std::this_thread::get_id();
  MDB_txn* txn_ = nullptr;
  std::vector<std::pair<std::string, std::string>> pending_;  // since the last commit
  std::string broken_;  // why the transaction is over; empty while it is usable
};

class LmdbDb final : public Db {
 public:
  LmdbDb(const std::string& path, DbMode mode) : path_(path), mode_(mode) {
    PrepareDirectory(path_, mode_);
    auto env = std::make_shared<LmdbEnv>();
    Open(env.get());
    env_ = std::move(env);
  }

  std::string Name() const override { return DbName(path_); }
  int64_t Count() const override {
    MDB_stat stat;
    Check(path_, "mdb_env_stat", mdb_env_stat(env_->env, &stat));
    return static_cast<int64_t>(stat.ms_entries);
  }
  std::unique_ptr<DbCursor> NewCursor() override {
    return std::make_unique<LmdbCursor>(env_, path_);
  }
  std::unique_ptr<DbTransaction> NewTransaction() override {
    if (mode_ == DbMode::kRead) {
      throw Error(Status::InvalidArgument(DbName(path_) + " was opened for reading; open it " +
                                          "with kWrite or kNew to write"));
    }
    return std::make_unique<LmdbTransaction>(env_, path_);
  }

 private:
  // Opens the environment into `env`, which closes it when it goes (also on an error here).
  void Open(LmdbEnv* env) const {
    Check(path_, "mdb_env_create", mdb_env_create(&env->env));
    Check(path_, "mdb_env_set_mapsize",
          mdb_env_set_mapsize(env->env,
                              mode_ == DbMode::kRead ? kReaderMapBytes : kWriterMapBytes));
    // MDB_NOTLS: a cursor's read transaction may move between threads (db.h lets any thread use
    // it, one at a time).
    const unsigned flags =
        mode_ == DbMode::kRead ? MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK : unsigned{MDB_NOTLS};
    Check(path_, "mdb_env_open", mdb_env_open(env->env, path_.c_str(), flags, 0664));
    MDB_txn* txn = nullptr;
    Check(path_, "mdb_txn_begin",
          mdb_txn_begin(env->env, nullptr, mode_ == DbMode::kRead ? MDB_RDONLY : 0u, &txn));
    const int rc = mdb_dbi_open(txn, nullptr, 0, &env->dbi);
    if (rc != MDB_SUCCESS) {
      mdb_txn_abort(txn);
      ThrowLmdb(path_, "mdb_dbi_open", rc);
    }
    Check(path_, "mdb_txn_commit", mdb_txn_commit(txn));
  }

  const std::string path_;
  const DbMode mode_;
  std::shared_ptr<const LmdbEnv> env_;
};

}  // namespace

std::unique_ptr<Db> OpenLmdb(const std::string& path, DbMode mode) {
  return std::make_unique<LmdbDb>(path, mode);
}

}  // namespace braid
