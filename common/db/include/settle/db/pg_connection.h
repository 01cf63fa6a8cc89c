#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "settle/core/status.h"

struct pg_conn;
struct pg_result;

namespace settle::db {

// The parameters of one statement, $1 upward in the order added. Values are copied: nothing
// needs to outlive the call.
class PgParams {
 public:
  // Text: must hold no NUL byte (the query is then refused with InvalidArgument) and must be
  // valid in the database's encoding (PostgreSQL refuses it otherwise, also InvalidArgument).
  PgParams& Text(std::string_view value);
  // Any bytes, for a BYTEA column (sent in binary).
  PgParams& Bytes(std::string_view value);
  PgParams& Int(std::int64_t value);
  PgParams& OptionalInt(std::optional<std::int64_t> value);

  std::size_t size() const { return values_.size(); }

 private:
  friend class PgConnection;
  std::vector<std::optional<std::string>> values_;
  std::vector<int> formats_;  // 0 text, 1 binary
};

// The rows of a statement, in PostgreSQL's text format. Columns are by index, 0-based.
class PgResult {
 public:
  explicit PgResult(pg_result* result) : result_(result) {}
  ~PgResult();
  PgResult(PgResult&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  PgResult& operator=(PgResult&&) = delete;
  PgResult(const PgResult&) = delete;

  int rows() const;
  // Rows an INSERT, UPDATE or DELETE changed.
  std::int64_t affected() const;
  bool IsNull(int row, int column) const;
  std::string Text(int row, int column) const;
  std::int64_t Int(int row, int column) const;
  std::optional<std::int64_t> OptionalInt(int row, int column) const;
  // A BYTEA column (decoded from PostgreSQL's hex output).
  std::string Bytes(int row, int column) const;

 private:
  pg_result* result_;
};

// One libpq connection to PostgreSQL, with the statements it has prepared. Every connection
// runs with synchronous_commit = on: a statement that returns has been flushed.
//
// Errors: a statement refused for its data (SQLSTATE class 22: an invalid byte sequence, a
// value out of range) is InvalidArgument; an integrity violation (class 23) is Conflict; SQL
// the server does not understand (class 42) is Internal; everything else, a lost connection
// included, is Unavailable. After a lost connection the next call connects again (and
// prepares its statements again); the transaction that was open is gone.
//
// Thread-safety: none; one thread at a time.
class PgConnection {
 public:
  // `conninfo`: a postgresql:// URL or libpq's key=value form.
  static Result<std::unique_ptr<PgConnection>> Open(const std::string& conninfo);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs `sql` (one or several statements, no parameters), discarding any rows.
  Status Run(std::string_view sql);

  // Runs one statement with parameters, prepared on first use and reused after.
  Result<PgResult> Query(std::string_view sql, const PgParams& params = {});

  // Inside BEGIN ... COMMIT (or an aborted transaction). False once the connection is lost.
  bool InTransaction() const;
  // Inside a transaction in which a statement failed: it can only roll back (COMMIT would).
  bool InFailedTransaction() const;

  // Whether the last statement that failed was chosen to fail by the server to break a
  // deadlock or a serialization conflict (SQLSTATE 40P01 or 40001): nothing of it took
  // effect, and the same statement may well succeed if run again.
  bool LastFailureRetryable() const { return last_failure_retryable_; }

  // The server's version as PQserverVersion gives it, e.g. 150018.
  int server_version() const;

 private:
  explicit PgConnection(pg_conn* connection) : connection_(connection) {}
  // The session settings every connection runs with.
  Status Configure();
  // Connects again if the connection was lost; Unavailable if that fails.
  Status EnsureConnected();
  Status ErrorOf(pg_result* result, std::string_view sql) const;

  pg_conn* connection_;
  std::unordered_map<std::string, std::string> prepared_;  // SQL -> statement name
  mutable bool last_failure_retryable_ = false;
};

}  // namespace settle::db
