#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/status.h"

namespace settle::bank {

// What one account may hold (balance + frozen + pending credits). Credits that bring new money
// in are refused above it; money coming back (a cancel, a compensation, a confirmed pending
// credit) is always accepted, and the gap to int64's limit (over 8 * 10^18) absorbs it.
inline constexpr std::int64_t kMaxHoldings = 1'000'000'000'000'000'000;  // 10^18

struct Account {
  std::string account_id;
  std::int64_t balance = 0;
  std::int64_t frozen = 0;
};

// What a Try holds for its branch, kept until its Confirm applies it or its Cancel drops it:
// money frozen at the payer's account (TransOut) or a credit pending at the payee's (TransIn).
// Phase 2 applies what the Try held, never what its own body says: the body of a Confirm is the
// registration's, which need not be what the Try was sent.
struct BranchHold {
  std::string account_id;
  std::int64_t amount = 0;
};

// The bank's tables, on a connection inside a transaction its caller owns (the barrier's, so
// that business changes and barrier rows commit together). Every statement is prepared with
// bound parameters. Errors: Conflict when the business says no (unknown account, short
// balance, holdings limit); Internal for a change that the protocol's order rules out (a
// Confirm with nothing reserved); Unavailable for SQLite errors. Not thread-safe: one per
// transaction.
class BankDb {
 public:
  explicit BankDb(sqlite3* db) : db_(db) {}

  // Creates the tables if needed and, when there is no account yet (the first start only),
  // accounts "1".."accounts" with `initial_balance` each.
  Status CreateSchema(int accounts, std::int64_t initial_balance);

  Result<std::optional<Account>> Find(const std::string& account_id);
  // In account order: "1", "2", ..., "10".
  Result<std::vector<Account>> List();

  // balance -> frozen, recorded under (gid, branch_id); Conflict when the balance is short or
  // the account unknown.
  Status Freeze(const std::string& gid, const std::string& branch_id, const std::string& account_id,
                std::int64_t amount);
  // Removes and returns what was frozen under (gid, branch_id), if anything.
  Result<std::optional<BranchHold>> TakeFreeze(const std::string& gid,
                                               const std::string& branch_id);
  // frozen -> balance (a Cancel), or out of frozen (a Confirm); Internal when not frozen.
  Status Unfreeze(const std::string& account_id, std::int64_t amount);
  Status SpendFrozen(const std::string& account_id, std::int64_t amount);

  // Takes from the balance; Conflict when short or unknown. With `allow_overdraft` (a
  // compensation, which must not fail) the balance may go negative.
  Status Debit(const std::string& account_id, std::int64_t amount, bool allow_overdraft = false);
  // Adds to the balance; with `check_limit` (new money) Conflict above kMaxHoldings.
  Status Credit(const std::string& account_id, std::int64_t amount, bool check_limit);

  // Records a pending credit under (gid, branch_id); Conflict for an unknown account or above
  // kMaxHoldings.
  Status AddPendingCredit(const std::string& gid, const std::string& branch_id,
                          const std::string& account_id, std::int64_t amount);
  // Removes and returns the pending credit under (gid, branch_id), if any.
  Result<std::optional<BranchHold>> TakePendingCredit(const std::string& gid,
                                                      const std::string& branch_id);

 private:
  // Conflict explaining why a change to `account_id` matched no row.
  Status Refusal(const std::string& account_id, std::int64_t amount, const char* what);
  // Records `amount` of `account_id` in `table` (freeze or pending_credit) under (gid,
  // branch_id).
  Status InsertHold(const char* table, const std::string& gid, const std::string& branch_id,
                    const std::string& account_id, std::int64_t amount);
  // Removes and returns the row of `table` (freeze or pending_credit) under (gid, branch_id).
  Result<std::optional<BranchHold>> TakeHold(const char* table, const std::string& gid,
                                             const std::string& branch_id);
  // balance + frozen + pending credits of an account, or nullopt if it is unknown.
  Result<std::optional<std::int64_t>> Holdings(const std::string& account_id);

  sqlite3* db_;
};

}  // namespace settle::bank
