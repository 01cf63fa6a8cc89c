#include "settle/db/sqlite_connection.h"

#include <filesystem>
#include <mutex>
#include <system_error>
#include <utility>

#include "sql_in_message.h"

namespace settle::db {
namespace {

// Errors after which a connection's state is not to be trusted for the next transaction.
bool IsFatal(int rc) {
  switch (rc & 0xff) {
    case SQLITE_IOERR:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
    case SQLITE_NOMEM:
      return true;
    default:
      return false;
  }
}

// A savepoint's statement journal is kept in memory in chunks as large as the size at which it
// spills to a temporary file (SQLITE_STMTJRNL_SPILL, 64 KiB), allocated at its first write and
// freed at its release. settled has glibc map blocks of 64 KiB or more on their own
// (coordinator/app/src/main.cc), so each chunk was an mmap, page faults, and an munmap that
// flushes every core's TLB, for each batch of each group commit: about a fifth of settled's CPU
// per saga (docs/benchmarks.md, issue 47). Chunks of 60 KiB stay in the allocator's arenas,
// and the journal spills at about the same size as before.
constexpr int kStatementJournalSpill = 60 * 1024;

// Settings of the library for the whole process, before its first connection initializes it.
// If something opened SQLite without this class first, they are not applied (SQLITE_MISUSE),
// which costs speed only.
void ConfigureLibraryOnce() {
  static std::once_flag once;
  std::call_once(once,
                 [] { sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, kStatementJournalSpill); });
}

}  // namespace

Status SqliteError(sqlite3* db, int rc, std::string_view operation) {
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string text = "sqlite: ";
  text.append(operation);
  text.append(": ");
  text.append(message != nullptr ? message : sqlite3_errstr(rc));
  const int primary = rc & 0xff;
  if (primary == SQLITE_MISUSE || primary == SQLITE_RANGE) return Status::Internal(text);
  return Status::Unavailable(text);
}

Status CreateParentDirectory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return Status::Ok();
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error) {
    return Status::Unavailable("creating directory " + parent.string() + ": " + error.message());
  }
  return Status::Ok();
}

// --- SqliteStatement ---

SqliteStatement::SqliteStatement(SqliteConnection* connection, sqlite3_stmt* stmt, bool* in_use)
    : connection_(connection), stmt_(stmt), in_use_(in_use) {
  *in_use_ = true;
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : connection_(other.connection_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      in_use_(std::exchange(other.in_use_, nullptr)),
      bind_status_(std::move(other.bind_status_)) {}

SqliteStatement::~SqliteStatement() {
  if (stmt_ == nullptr) return;
  // Resetting ends the statement's implicit read transaction: a reader that kept it open
  // would go on seeing an old snapshot. Its error repeats the last Step()'s, already reported.
  sqlite3_reset(stmt_);
  *in_use_ = false;
}

void SqliteStatement::Remember(int rc) {
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = connection_->Error(rc, "binding " + AbbreviateSql(sqlite3_sql(stmt_)));
  }
}

SqliteStatement& SqliteStatement::BindText(int index, std::string_view value) {
  Remember(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8));
  return *this;
}

SqliteStatement& SqliteStatement::BindBlob(int index, std::string_view value) {
  // A zero-length blob must still be a blob, not NULL: data() of an empty view may be null.
  static const char kEmpty = 0;
  Remember(sqlite3_bind_blob64(stmt_, index, value.empty() ? &kEmpty : value.data(), value.size(),
                               SQLITE_STATIC));
  return *this;
}

SqliteStatement& SqliteStatement::BindInt64(int index, std::int64_t value) {
  Remember(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

SqliteStatement& SqliteStatement::BindOptionalInt64(int index, std::optional<std::int64_t> value) {
  Remember(value ? sqlite3_bind_int64(stmt_, index, *value) : sqlite3_bind_null(stmt_, index));
  return *this;
}

Result<bool> SqliteStatement::Step() {
  if (!bind_status_.ok()) return bind_status_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return connection_->Error(rc, "executing " + AbbreviateSql(sqlite3_sql(stmt_)));
}

Status SqliteStatement::Run() {
  for (;;) {
    Result<bool> row = Step();
    if (!row) return row.status();
    if (!*row) return Status::Ok();
  }
}

bool SqliteStatement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t SqliteStatement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::optional<std::int64_t> SqliteStatement::ColumnOptionalInt64(int column) const {
  if (ColumnIsNull(column)) return std::nullopt;
  return sqlite3_column_int64(stmt_, column);
}

std::string SqliteStatement::ColumnBytes(int column) const {
  // sqlite3_column_blob returns TEXT unconverted too; call bytes() after it, as documented.
  const void* data = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr || size <= 0) return {};
  return std::string(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

// --- SqliteConnection ---

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& path, int flags,
                                                                 int busy_timeout_ms) {
  ConfigureLibraryOnce();
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(db, rc, "opening " + path);
    sqlite3_close_v2(db);  // a handle is returned even on failure; closing null is a no-op
    return status;
  }
  auto connection = std::unique_ptr<SqliteConnection>(new SqliteConnection(db));
  const int timeout_rc = sqlite3_busy_timeout(db, busy_timeout_ms);
  if (timeout_rc != SQLITE_OK) return SqliteError(db, timeout_rc, "setting busy_timeout");
  return connection;
}

SqliteConnection::~SqliteConnection() {
  for (auto& [sql, cached] : statements_) sqlite3_finalize(cached.stmt);
  sqlite3_close_v2(db_);
}

Status SqliteConnection::Error(int rc, std::string_view operation) {
  if (IsFatal(rc)) broken_ = true;
  return SqliteError(db_, rc, operation);
}

Status SqliteConnection::Exec(const std::string& sql) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  sqlite3_free(error);  // sqlite3_errmsg() still holds the same text
  if (rc != SQLITE_OK) return Error(rc, "executing " + AbbreviateSql(sql));
  return Status::Ok();
}

Result<SqliteStatement> SqliteConnection::Prepare(std::string_view sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return Error(rc, "preparing " + AbbreviateSql(sql));
    }
    if (stmt == nullptr) return Status::Internal("sqlite: empty statement: " + AbbreviateSql(sql));
    it = statements_.emplace(std::string(sql), CachedStatement{stmt, false}).first;
  } else if (it->second.in_use) {
    return Status::Internal("sqlite: statement is already in use: " + AbbreviateSql(sql));
  } else {
    sqlite3_clear_bindings(it->second.stmt);
  }
  return SqliteStatement(this, it->second.stmt, &it->second.in_use);
}

Status SqliteConnection::Run(std::string_view sql) {
  Result<SqliteStatement> stmt = Prepare(sql);
  if (!stmt) return stmt.status();
  return stmt->Run();
}

}  // namespace settle::db
