#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "settle/core/status.h"

// A small SQLite wrapper shared by the coordinator's store and the participant SDK's barrier
// (library settle_sqlite): a connection with a cache of prepared statements, and errors as a
// Status naming the operation. Nothing here throws.
namespace settle::db {

// The Status for a failed SQLite call: Internal for API misuse (a bug in Settle),
// Unavailable for everything else (busy, I/O, full disk), with SQLite's message and what was
// being done.
Status SqliteError(sqlite3* db, int rc, std::string_view operation);

// Creates the directory a database file is to live in, if it is missing. Unavailable naming the
// directory if it cannot be created.
Status CreateParentDirectory(const std::string& path);

class SqliteConnection;

// A prepared statement borrowed from a connection's cache. Move-only; on destruction it is
// reset (which ends the implicit read transaction it may hold) and returned to the cache.
//
// Bind errors are remembered and reported by the next Step()/Run(), so binding reads as one
// chain. Bound text and blobs are not copied: they must outlive the statement's use. Column
// accessors are valid only after Step() returned true.
class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  SqliteStatement(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameter indexes are 1-based, as in SQLite.
  SqliteStatement& BindText(int index, std::string_view value);
  SqliteStatement& BindBlob(int index, std::string_view value);
  SqliteStatement& BindInt64(int index, std::int64_t value);
  SqliteStatement& BindOptionalInt64(int index, std::optional<std::int64_t> value);

  // true: a row is available; false: the statement is done.
  Result<bool> Step();
  // Steps until done, ignoring rows.
  Status Run();

  bool ColumnIsNull(int column) const;
  std::int64_t ColumnInt64(int column) const;
  std::optional<std::int64_t> ColumnOptionalInt64(int column) const;
  // TEXT and BLOB columns alike, byte for byte (embedded NULs included).
  std::string ColumnBytes(int column) const;

 private:
  friend class SqliteConnection;
  SqliteStatement(SqliteConnection* connection, sqlite3_stmt* stmt, bool* in_use);
  void Remember(int rc);

  SqliteConnection* connection_;
  sqlite3_stmt* stmt_;
  bool* in_use_;
  Status bind_status_;
};

// One SQLite connection with a cache of prepared statements keyed by SQL text.
//
// Thread-safety: none. A connection is used by one thread at a time; it is opened with
// SQLITE_OPEN_NOMUTEX.
class SqliteConnection {
 public:
  // `flags` are sqlite3_open_v2 flags; SQLITE_OPEN_NOMUTEX is added.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& path, int flags,
                                                        int busy_timeout_ms);
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  // Runs one or more statements that take no parameters (DDL, PRAGMAs), ignoring rows.
  Status Exec(const std::string& sql);

  // The cached statement for `sql`, prepared on first use; bindings are cleared. Internal if
  // the same statement is still borrowed (it would be reset under its user).
  Result<SqliteStatement> Prepare(std::string_view sql);

  // Convenience: Prepare(sql) and Run() it (BEGIN, COMMIT, SAVEPOINT, ...).
  Status Run(std::string_view sql);

  // Rows modified by the last INSERT/UPDATE/DELETE.
  int Changes() const { return sqlite3_changes(db_); }
  bool InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

  // A connection that saw a fatal error (I/O, corruption, out of memory), or that its owner
  // marked, is not to be trusted with another transaction: pools close it.
  void MarkBroken() { broken_ = true; }
  bool broken() const { return broken_; }

  sqlite3* handle() const { return db_; }

 private:
  friend class SqliteStatement;
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  // SqliteError, and marks the connection broken for fatal codes.
  Status Error(int rc, std::string_view operation);

  struct CachedStatement {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  sqlite3* db_;
  bool broken_ = false;
  std::unordered_map<std::string, CachedStatement, StringHash, std::equal_to<>> statements_;
};

}  // namespace settle::db
