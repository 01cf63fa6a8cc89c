#include "settle/sdk/version_check.h"

#include <sqlite3.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "settle/db/pg_connection.h"
#include "settle/sdk/postgres_barrier_store.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::sdk {
namespace {

// Statements with bound values on the connection of one engine.
class Engine {
 public:
  virtual ~Engine() = default;
  // The text of parameter n (1-based).
  virtual std::string Param(int n) const = 0;
  // Runs an UPDATE; the rows it changed.
  virtual Result<std::int64_t> Change(const std::string& sql,
                                      const std::vector<CasValue>& values) = 0;
  // The first `columns` columns of a SELECT's first row, as text; nullopt without a row.
  virtual Result<std::optional<std::vector<std::string>>> Row(const std::string& sql,
                                                              const std::vector<CasValue>& values,
                                                              int columns) = 0;
};

class SqliteEngine final : public Engine {
 public:
  explicit SqliteEngine(sqlite3* db) : db_(db) {}

  std::string Param(int n) const override { return "?" + std::to_string(n); }

  Result<std::int64_t> Change(const std::string& sql,
                              const std::vector<CasValue>& values) override {
    Result<Statement> statement = Prepare(sql, values);
    if (!statement) return statement.status();
    int rc = sqlite3_step(statement->get());
    if (rc != SQLITE_DONE) return Error("update");
    return static_cast<std::int64_t>(sqlite3_changes(db_));
  }

  Result<std::optional<std::vector<std::string>>> Row(const std::string& sql,
                                                      const std::vector<CasValue>& values,
                                                      int columns) override {
    Result<Statement> statement = Prepare(sql, values);
    if (!statement) return statement.status();
    int rc = sqlite3_step(statement->get());
    if (rc == SQLITE_DONE) return std::optional<std::vector<std::string>>();
    if (rc != SQLITE_ROW) return Error("select");
    std::vector<std::string> row;
    for (int i = 0; i < columns; ++i) {
      const unsigned char* text = sqlite3_column_text(statement->get(), i);
      row.emplace_back(text != nullptr ? reinterpret_cast<const char*>(text) : "");
    }
    return std::optional<std::vector<std::string>>(std::move(row));
  }

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  using Statement = std::unique_ptr<sqlite3_stmt, Finalize>;

  Result<Statement> Prepare(const std::string& sql, const std::vector<CasValue>& values) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
      sqlite3_finalize(raw);
      return Error("prepare");
    }
    Statement statement(raw);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const int n = static_cast<int>(i) + 1;
      int rc = std::holds_alternative<std::int64_t>(values[i])
                   ? sqlite3_bind_int64(raw, n, std::get<std::int64_t>(values[i]))
                   : sqlite3_bind_text(raw, n, std::get<std::string>(values[i]).c_str(), -1,
                                       SQLITE_TRANSIENT);
      if (rc != SQLITE_OK) return Error("bind");
    }
    return statement;
  }

  Status Error(const std::string& what) const {
    return Status::Internal("version check: " + what + ": " + sqlite3_errmsg(db_));
  }

  sqlite3* db_;
};

class PostgresEngine final : public Engine {
 public:
  explicit PostgresEngine(db::PgConnection& connection) : connection_(connection) {}

  std::string Param(int n) const override { return "$" + std::to_string(n); }

  Result<std::int64_t> Change(const std::string& sql,
                              const std::vector<CasValue>& values) override {
    Result<db::PgResult> result = connection_.Query(sql, Params(values));
    if (!result) return result.status();
    return result->affected();
  }

  Result<std::optional<std::vector<std::string>>> Row(const std::string& sql,
                                                      const std::vector<CasValue>& values,
                                                      int columns) override {
    Result<db::PgResult> result = connection_.Query(sql, Params(values));
    if (!result) return result.status();
    if (result->rows() == 0) return std::optional<std::vector<std::string>>();
    std::vector<std::string> row;
    for (int i = 0; i < columns; ++i) row.push_back(result->Text(0, i));
    return std::optional<std::vector<std::string>>(std::move(row));
  }

 private:
  static db::PgParams Params(const std::vector<CasValue>& values) {
    db::PgParams params;
    for (const CasValue& value : values) {
      if (std::holds_alternative<std::int64_t>(value)) {
        params.Int(std::get<std::int64_t>(value));
      } else {
        params.Text(std::get<std::string>(value));
      }
    }
    return params;
  }

  db::PgConnection& connection_;
};

Result<std::unique_ptr<Engine>> EngineOf(BarrierTransaction& tx) {
  if (sqlite3* db = SqliteBarrierStore::Connection(tx); db != nullptr) {
    return std::unique_ptr<Engine>(std::make_unique<SqliteEngine>(db));
  }
  if (db::PgConnection* connection = PostgresBarrierStore::Connection(tx); connection != nullptr) {
    return std::unique_ptr<Engine>(std::make_unique<PostgresEngine>(*connection));
  }
  return Status::InvalidArgument(
      "version check: tx: a transaction of neither a SqliteBarrierStore nor a "
      "PostgresBarrierStore");
}

bool IsIdentifier(const std::string& name) {
  if (name.empty()) return false;
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!letter(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

Status CheckIdentifier(const std::string& argument, const std::string& name) {
  if (IsIdentifier(name)) return Status::Ok();
  return Status::InvalidArgument("version check: " + argument +
                                 " must match [A-Za-z_][A-Za-z0-9_]*");
}

Status Check(const VersionedUpdate& update) {
  for (const auto& [argument, name] :
       {std::pair<std::string, const std::string&>{"table", update.table},
        {"id_column", update.id_column},
        {"version_column", update.version_column}}) {
    if (Status s = CheckIdentifier(argument, name); !s.ok()) return s;
  }
  if (update.set.empty()) return Status::InvalidArgument("version check: set is empty");
  for (const auto& [column, value] : update.set) {
    if (Status s = CheckIdentifier("set", column); !s.ok()) return s;
    if (column == update.version_column || column == update.id_column) {
      return Status::InvalidArgument("version check: set names the id or version column");
    }
  }
  return Status::Ok();
}

std::ptrdiff_t IndexIn(const std::vector<std::string>& order, const std::string& state) {
  auto it = std::find(order.begin(), order.end(), state);
  return it == order.end() ? -1 : it - order.begin();
}

Status Check(const StateMove& move) {
  for (const auto& [argument, name] :
       {std::pair<std::string, const std::string&>{"table", move.table},
        {"id_column", move.id_column},
        {"state_column", move.state_column}}) {
    if (Status s = CheckIdentifier(argument, name); !s.ok()) return s;
  }
  const std::ptrdiff_t to = IndexIn(move.order, move.to);
  if (to < 0) return Status::InvalidArgument("version check: to is not in order");
  if (move.from.empty()) return Status::InvalidArgument("version check: from is empty");
  for (const std::string& state : move.from) {
    const std::ptrdiff_t from = IndexIn(move.order, state);
    if (from < 0)
      return Status::InvalidArgument("version check: from: " + state + " is not in order");
    if (from >= to) {
      return Status::InvalidArgument("version check: from: " + state + " is not before " + move.to);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<CasOutcome> UpdateIfVersion(BarrierTransaction& tx, const VersionedUpdate& update) {
  if (Status s = Check(update); !s.ok()) return s;
  Result<std::unique_ptr<Engine>> engine = EngineOf(tx);
  if (!engine) return engine.status();
  Engine& sql = **engine;

  std::vector<CasValue> values;
  std::string assignments;
  for (const auto& [column, value] : update.set) {
    values.push_back(value);
    assignments += column + " = " + sql.Param(static_cast<int>(values.size())) + ", ";
  }
  values.push_back(update.id);
  values.push_back(update.expected_version);
  const int n = static_cast<int>(values.size());
  Result<std::int64_t> changed =
      sql.Change("UPDATE " + update.table + " SET " + assignments + update.version_column + " = " +
                     update.version_column + " + 1 WHERE " + update.id_column + " = " +
                     sql.Param(n - 1) + " AND " + update.version_column + " = " + sql.Param(n),
                 values);
  if (!changed) return changed.status();
  if (*changed > 0) return CasOutcome::kApplied;

  // Did this very update happen already? The row holds its values at the version after it.
  std::vector<CasValue> read;
  read.push_back(update.id);
  std::string same = "1 = 1";
  for (const auto& [column, value] : update.set) {
    read.push_back(value);
    same += " AND " + column + " = " + sql.Param(static_cast<int>(read.size()));
  }
  Result<std::optional<std::vector<std::string>>> row = sql.Row(
      "SELECT " + update.version_column + ", CASE WHEN " + same + " THEN 1 ELSE 0 END FROM " +
          update.table + " WHERE " + update.id_column + " = " + sql.Param(1),
      read, 2);
  if (!row) return row.status();
  if (!row->has_value()) return CasOutcome::kNotFound;
  const std::vector<std::string>& found = **row;
  if (found[0] == std::to_string(update.expected_version + 1) && found[1] == "1") {
    return CasOutcome::kAlreadyDone;
  }
  return CasOutcome::kConflict;
}

Result<CasOutcome> MoveState(BarrierTransaction& tx, const StateMove& move) {
  if (Status s = Check(move); !s.ok()) return s;
  Result<std::unique_ptr<Engine>> engine = EngineOf(tx);
  if (!engine) return engine.status();
  Engine& sql = **engine;

  std::vector<CasValue> values;
  values.emplace_back(move.to);
  values.push_back(move.id);
  std::string from;
  for (const std::string& state : move.from) {
    values.push_back(state);
    from += (from.empty() ? "" : ", ") + sql.Param(static_cast<int>(values.size()));
  }
  Result<std::int64_t> changed =
      sql.Change("UPDATE " + move.table + " SET " + move.state_column + " = " + sql.Param(1) +
                     " WHERE " + move.id_column + " = " + sql.Param(2) + " AND " +
                     move.state_column + " IN (" + from + ")",
                 values);
  if (!changed) return changed.status();
  if (*changed > 0) return CasOutcome::kApplied;

  std::vector<CasValue> id;
  id.push_back(move.id);
  Result<std::optional<std::vector<std::string>>> row =
      sql.Row("SELECT " + move.state_column + " FROM " + move.table + " WHERE " + move.id_column +
                  " = " + sql.Param(1),
              id, 1);
  if (!row) return row.status();
  if (!row->has_value()) return CasOutcome::kNotFound;
  const std::ptrdiff_t at = IndexIn(move.order, (**row)[0]);
  if (at >= IndexIn(move.order, move.to)) return CasOutcome::kAlreadyDone;
  return CasOutcome::kConflict;
}

}  // namespace settle::sdk
