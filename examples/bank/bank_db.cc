#include "bank_db.h"

#include "statement.h"

namespace settle::bank {
namespace {

// Balances may go negative only through a compensation (see Debit), so there is no CHECK on
// balance; frozen money only ever comes from a balance.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS account (
  account_id TEXT PRIMARY KEY,
  balance INTEGER NOT NULL,
  frozen INTEGER NOT NULL CHECK (frozen >= 0)
);
CREATE TABLE IF NOT EXISTS pending_credit (
  gid TEXT NOT NULL,
  branch_id TEXT NOT NULL,
  account_id TEXT NOT NULL REFERENCES account (account_id),
  amount INTEGER NOT NULL CHECK (amount > 0),
  PRIMARY KEY (gid, branch_id)
);
CREATE INDEX IF NOT EXISTS pending_credit_by_account ON pending_credit (account_id);
CREATE TABLE IF NOT EXISTS freeze (
  gid TEXT NOT NULL,
  branch_id TEXT NOT NULL,
  account_id TEXT NOT NULL REFERENCES account (account_id),
  amount INTEGER NOT NULL CHECK (amount > 0),
  PRIMARY KEY (gid, branch_id)
);
)sql";

// Runs `statement` and checks that it changed a row; `refuse` explains why not.
template <typename Refuse>
Status ChangeOne(Statement& statement, Refuse refuse) {
  Status s = statement.Run();
  if (!s.ok()) return s;
  return statement.Changes() == 1 ? Status::Ok() : refuse();
}

// The barrier runs a Confirm or Cancel only after its Try reserved the amount: anything else is
// a bug, and the 500 makes the coordinator retry and flag the transaction.
Status NotFrozen(const std::string& account_id, std::int64_t amount) {
  return Status::Internal("account " + account_id + ": less than " + std::to_string(amount) +
                          " frozen");
}

}  // namespace

Status BankDb::CreateSchema(int accounts, std::int64_t initial_balance) {
  char* error = nullptr;
  if (sqlite3_exec(db_, kSchema, nullptr, nullptr, &error) != SQLITE_OK) {
    Status s = Status::Unavailable(std::string("create schema: ") + (error ? error : "?"));
    sqlite3_free(error);
    return s;
  }
  // One statement, so that accounts are created only when there are none: a restart keeps
  // them, whatever --accounts says then.
  Statement insert(db_,
                   "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) "
                   "INSERT INTO account (account_id, balance, frozen) "
                   "SELECT CAST(i AS TEXT), ?2, 0 FROM n "
                   "WHERE NOT EXISTS (SELECT 1 FROM account)");
  return insert.Bind(1, std::int64_t{accounts}).Bind(2, initial_balance).Run();
}

Result<std::optional<Account>> BankDb::Find(const std::string& account_id) {
  Statement select(db_, "SELECT balance, frozen FROM account WHERE account_id = ?1");
  Result<bool> row = select.Bind(1, account_id).Step();
  if (!row) return row.status();
  if (!*row) return std::optional<Account>();
  return std::optional<Account>(Account{account_id, select.Int64(0), select.Int64(1)});
}

Result<std::vector<Account>> BankDb::List() {
  Statement select(db_,
                   "SELECT account_id, balance, frozen FROM account "
                   "ORDER BY length(account_id), account_id");
  std::vector<Account> accounts;
  for (;;) {
    Result<bool> row = select.Step();
    if (!row) return row.status();
    if (!*row) return accounts;
    accounts.push_back(Account{select.Text(0), select.Int64(1), select.Int64(2)});
  }
}

Status BankDb::Freeze(const std::string& gid, const std::string& branch_id,
                      const std::string& account_id, std::int64_t amount) {
  Statement update(db_,
                   "UPDATE account SET balance = balance - ?2, frozen = frozen + ?2 "
                   "WHERE account_id = ?1 AND balance >= ?2");
  Status frozen = ChangeOne(update.Bind(1, account_id).Bind(2, amount),
                            [&] { return Refusal(account_id, amount, "insufficient funds"); });
  if (!frozen.ok()) return frozen;
  return InsertHold("freeze", gid, branch_id, account_id, amount);
}

Result<std::optional<BranchHold>> BankDb::TakeFreeze(const std::string& gid,
                                                     const std::string& branch_id) {
  return TakeHold("freeze", gid, branch_id);
}

Status BankDb::Unfreeze(const std::string& account_id, std::int64_t amount) {
  Statement update(db_,
                   "UPDATE account SET balance = balance + ?2, frozen = frozen - ?2 "
                   "WHERE account_id = ?1 AND frozen >= ?2");
  return ChangeOne(update.Bind(1, account_id).Bind(2, amount),
                   [&] { return NotFrozen(account_id, amount); });
}

Status BankDb::SpendFrozen(const std::string& account_id, std::int64_t amount) {
  Statement update(
      db_, "UPDATE account SET frozen = frozen - ?2 WHERE account_id = ?1 AND frozen >= ?2");
  return ChangeOne(update.Bind(1, account_id).Bind(2, amount),
                   [&] { return NotFrozen(account_id, amount); });
}

Status BankDb::Debit(const std::string& account_id, std::int64_t amount, bool allow_overdraft) {
  Statement update(db_,
                   "UPDATE account SET balance = balance - ?2 "
                   "WHERE account_id = ?1 AND (?3 OR balance >= ?2)");
  update.Bind(1, account_id).Bind(2, amount).Bind(3, std::int64_t{allow_overdraft});
  return ChangeOne(update, [&] { return Refusal(account_id, amount, "insufficient funds"); });
}

Status BankDb::Credit(const std::string& account_id, std::int64_t amount, bool check_limit) {
  if (check_limit) {
    Result<std::optional<std::int64_t>> holdings = Holdings(account_id);
    if (!holdings) return holdings.status();
    if (*holdings && **holdings > kMaxHoldings - amount) {
      return Refusal(account_id, amount, "the account would hold more than 10^18");
    }
  }
  Statement update(db_, "UPDATE account SET balance = balance + ?2 WHERE account_id = ?1");
  return ChangeOne(update.Bind(1, account_id).Bind(2, amount),
                   [&] { return Refusal(account_id, amount, "unknown account"); });
}

Status BankDb::AddPendingCredit(const std::string& gid, const std::string& branch_id,
                                const std::string& account_id, std::int64_t amount) {
  Result<std::optional<std::int64_t>> holdings = Holdings(account_id);
  if (!holdings) return holdings.status();
  if (!*holdings) return Refusal(account_id, amount, "unknown account");
  if (**holdings > kMaxHoldings - amount) {
    return Refusal(account_id, amount, "the account would hold more than 10^18");
  }
  return InsertHold("pending_credit", gid, branch_id, account_id, amount);
}

Result<std::optional<BranchHold>> BankDb::TakePendingCredit(const std::string& gid,
                                                            const std::string& branch_id) {
  return TakeHold("pending_credit", gid, branch_id);
}

Status BankDb::InsertHold(const char* table, const std::string& gid, const std::string& branch_id,
                          const std::string& account_id, std::int64_t amount) {
  const std::string sql = std::string("INSERT INTO ") + table +
                          " (gid, branch_id, account_id, amount) VALUES (?1, ?2, ?3, ?4)";
  Statement insert(db_, sql.c_str());
  return insert.Bind(1, gid).Bind(2, branch_id).Bind(3, account_id).Bind(4, amount).Run();
}

Result<std::optional<BranchHold>> BankDb::TakeHold(const char* table, const std::string& gid,
                                                   const std::string& branch_id) {
  const std::string sql = std::string("DELETE FROM ") + table +
                          " WHERE gid = ?1 AND branch_id = ?2 RETURNING account_id, amount";
  Statement take(db_, sql.c_str());
  Result<bool> row = take.Bind(1, gid).Bind(2, branch_id).Step();
  if (!row) return row.status();
  if (!*row) return std::optional<BranchHold>();
  BranchHold hold{take.Text(0), take.Int64(1)};
  Status s = take.Run();  // RETURNING applies the delete only once stepped to the end
  if (!s.ok()) return s;
  return std::optional<BranchHold>(std::move(hold));
}

Status BankDb::Refusal(const std::string& account_id, std::int64_t amount, const char* what) {
  Result<std::optional<Account>> account = Find(account_id);
  if (!account) return account.status();
  if (!*account) return Status::Conflict("account " + account_id + ": unknown account");
  return Status::Conflict("account " + account_id + ": " + what + " (balance " +
                          std::to_string((*account)->balance) + ", amount " +
                          std::to_string(amount) + ")");
}

Result<std::optional<std::int64_t>> BankDb::Holdings(const std::string& account_id) {
  Statement select(db_,
                   "SELECT balance + frozen + (SELECT COALESCE(SUM(amount), 0) FROM pending_credit "
                   "WHERE account_id = ?1) FROM account WHERE account_id = ?1");
  Result<bool> row = select.Bind(1, account_id).Step();
  if (!row) return row.status();
  if (!*row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(select.Int64(0));
}

}  // namespace settle::bank
