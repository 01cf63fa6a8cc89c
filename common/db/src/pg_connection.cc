#include "settle/db/pg_connection.h"

#include <libpq-fe.h>

#include <charconv>
#include <utility>

#include "settle/core/ascii.h"
#include "sql_in_message.h"

namespace settle::db {
namespace {

// libpq's messages end with a newline (and sometimes carry a DETAIL line after it).
std::string OneLine(const char* message) {
  std::string text = message != nullptr ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

}  // namespace

// --- PgParams ---

PgParams& PgParams::Text(std::string_view value) {
  values_.emplace_back(std::string(value));
  formats_.push_back(0);
  return *this;
}

PgParams& PgParams::Bytes(std::string_view value) {
  values_.emplace_back(std::string(value));
  formats_.push_back(1);
  return *this;
}

PgParams& PgParams::Int(std::int64_t value) { return Text(std::to_string(value)); }

PgParams& PgParams::OptionalInt(std::optional<std::int64_t> value) {
  if (value) return Int(*value);
  values_.emplace_back(std::nullopt);
  formats_.push_back(0);
  return *this;
}

// --- PgResult ---

PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}

int PgResult::rows() const { return PQntuples(result_); }

std::int64_t PgResult::affected() const {
  const char* tuples = PQcmdTuples(result_);
  std::int64_t n = 0;
  if (tuples != nullptr)
    std::from_chars(tuples, tuples + std::char_traits<char>::length(tuples), n);
  return n;
}

bool PgResult::IsNull(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }

std::string PgResult::Text(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column),
                     static_cast<std::size_t>(PQgetlength(result_, row, column)));
}

std::int64_t PgResult::Int(int row, int column) const {
  const char* text = PQgetvalue(result_, row, column);
  std::int64_t n = 0;
  std::from_chars(text, text + PQgetlength(result_, row, column), n);
  return n;
}

std::optional<std::int64_t> PgResult::OptionalInt(int row, int column) const {
  if (IsNull(row, column)) return std::nullopt;
  return Int(row, column);
}

std::string PgResult::Bytes(int row, int column) const {
  // bytea_output = hex (the default since PostgreSQL 9.0): "\x" then two digits a byte. The
  // connection sets it, so an old server setting cannot change the format.
  const std::string_view text(PQgetvalue(result_, row, column),
                              static_cast<std::size_t>(PQgetlength(result_, row, column)));
  std::string bytes;
  if (text.size() < 2) return bytes;
  bytes.reserve((text.size() - 2) / 2);
  for (std::size_t i = 2; i + 1 < text.size(); i += 2) {
    bytes.push_back(static_cast<char>(HexDigitValue(text[i]) * 16 + HexDigitValue(text[i + 1])));
  }
  return bytes;
}

// --- PgConnection ---

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& conninfo) {
  pg_conn* connection = PQconnectdb(conninfo.c_str());
  if (connection == nullptr) return Status::Unavailable("postgresql: out of memory");
  if (PQstatus(connection) != CONNECTION_OK) {
    std::string message = OneLine(PQerrorMessage(connection));
    PQfinish(connection);
    return Status::Unavailable("postgresql: connecting: " + message);
  }
  auto c = std::unique_ptr<PgConnection>(new PgConnection(connection));
  if (Status s = c->Configure(); !s.ok()) return s;
  return c;
}

PgConnection::~PgConnection() { PQfinish(connection_); }

Status PgConnection::EnsureConnected() {
  if (PQstatus(connection_) == CONNECTION_OK) return Status::Ok();
  prepared_.clear();  // they lived in the server session that is gone
  PQreset(connection_);
  if (PQstatus(connection_) != CONNECTION_OK) {
    return Status::Unavailable("postgresql: reconnecting: " + OneLine(PQerrorMessage(connection_)));
  }
  return Configure();
}

Status PgConnection::Configure() {
  // Settle's readers decode BYTEA from hex; a write acknowledged is a write flushed, whatever
  // the server's default; warnings (ROLLBACK outside a transaction, say) are expected and not
  // worth a line on stderr.
  return Run(
      "SET bytea_output = 'hex'; SET synchronous_commit = on; SET client_min_messages = error");
}

Status PgConnection::ErrorOf(pg_result* result, std::string_view sql) const {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string message =
      OneLine(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(connection_));
  const std::string text = "postgresql: " + AbbreviateSql(sql) + ": " +
                           (message.empty() ? OneLine(PQerrorMessage(connection_)) : message);
  const std::string_view sqlstate = state != nullptr ? state : "";
  last_failure_retryable_ = sqlstate == "40P01" || sqlstate == "40001";
  if (sqlstate.starts_with("22")) return Status::InvalidArgument(text);
  if (sqlstate.starts_with("23")) return Status::Conflict(text);
  if (sqlstate.starts_with("42")) return Status::Internal(text);
  return Status::Unavailable(text);
}

Status PgConnection::Run(std::string_view sql) {
  if (Status s = EnsureConnected(); !s.ok()) return s;
  const std::string text(sql);
  pg_result* result = PQexec(connection_, text.c_str());
  const ExecStatusType status = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  Status outcome =
      status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK ? Status::Ok() : ErrorOf(result, sql);
  if (result != nullptr) PQclear(result);
  return outcome;
}

Result<PgResult> PgConnection::Query(std::string_view sql, const PgParams& params) {
  const int n = static_cast<int>(params.size());
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::optional<std::string>& value = params.values_[i];
    if (!value) continue;
    if (params.formats_[i] == 0 && value->find('\0') != std::string::npos) {
      return Status::InvalidArgument("postgresql: " + AbbreviateSql(sql) + ": text parameter $" +
                                     std::to_string(i + 1) + " contains a NUL byte");
    }
    values[i] = value->data();
    lengths[i] = static_cast<int>(value->size());
  }
  if (Status s = EnsureConnected(); !s.ok()) return s;

  auto found = prepared_.find(std::string(sql));
  if (found == prepared_.end()) {
    const std::string name = "settle_" + std::to_string(prepared_.size());
    const std::string text(sql);
    pg_result* prepared = PQprepare(connection_, name.c_str(), text.c_str(), n, nullptr);
    const bool ok = prepared != nullptr && PQresultStatus(prepared) == PGRES_COMMAND_OK;
    Status error = ok ? Status::Ok() : ErrorOf(prepared, sql);
    if (prepared != nullptr) PQclear(prepared);
    if (!ok) return error;
    found = prepared_.emplace(text, name).first;
  }
  pg_result* result = PQexecPrepared(connection_, found->second.c_str(), n, values.data(),
                                     lengths.data(), params.formats_.data(), /*resultFormat=*/0);
  const ExecStatusType status = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    Status error = ErrorOf(result, sql);
    if (result != nullptr) PQclear(result);
    return error;
  }
  return PgResult(result);
}

bool PgConnection::InTransaction() const {
  const PGTransactionStatusType status = PQtransactionStatus(connection_);
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
}

bool PgConnection::InFailedTransaction() const {
  return PQtransactionStatus(connection_) == PQTRANS_INERROR;
}

int PgConnection::server_version() const { return PQserverVersion(connection_); }

}  // namespace settle::db
