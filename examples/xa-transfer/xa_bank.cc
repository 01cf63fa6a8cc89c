#include "xa_bank.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace settle::xa_bank {
namespace {

// The balance can never go below zero: the database refuses it, whoever writes.
constexpr std::string_view kSchemaSql =
    "CREATE TABLE IF NOT EXISTS account ("
    " id TEXT PRIMARY KEY,"
    " balance BIGINT NOT NULL CHECK (balance >= 0))";
// Not ON CONFLICT DO NOTHING: that waits for a prepared branch holding the account's row, and a
// bank restarted after a crash must serve the phase 2 that ends it. A plain read does not wait.
constexpr std::string_view kCreateAccountSql =
    "INSERT INTO account (id, balance) SELECT $1::text, $2::bigint"
    " WHERE NOT EXISTS (SELECT 1 FROM account WHERE id = $1::text)";
constexpr std::string_view kAddSql =
    "UPDATE account SET balance = balance + $2::bigint WHERE id = $1::text";
constexpr std::string_view kBalancesSql = "SELECT id, balance FROM account ORDER BY id";
// The prepared transactions holding locks on this bank's accounts (another bank's schema on
// the same server has an `account` table of its own, with another oid).
constexpr std::string_view kPreparedSql =
    "SELECT p.gid FROM pg_prepared_xacts p"
    " JOIN pg_locks x ON x.locktype = 'transactionid' AND x.transactionid = p.transaction"
    " JOIN pg_locks r ON r.virtualtransaction = x.virtualtransaction"
    " AND r.locktype = 'relation' AND r.relation = 'account'::regclass"
    " ORDER BY p.gid";

struct Transfer {
  std::string account_id;
  std::int64_t amount = 0;
};

// {"account_id":"A","amount":30}; InvalidArgument naming the field otherwise.
Result<Transfer> ParseTransfer(const std::string& body) {
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return Status::InvalidArgument("body: must be a JSON object");
  Transfer t;
  auto id = json.find("account_id");
  if (id == json.end() || !id->is_string() || id->get<std::string>().empty()) {
    return Status::InvalidArgument("account_id: must be a non-empty string");
  }
  t.account_id = id->get<std::string>();
  auto amount = json.find("amount");
  if (amount == json.end() || !amount->is_number_integer() || amount->get<std::int64_t>() <= 0) {
    return Status::InvalidArgument("amount: must be a positive integer");
  }
  t.amount = amount->get<std::int64_t>();
  return t;
}

// Adds `sign` * amount to the account named in the branch's body, in the branch's local
// transaction. Conflict (409 FAILURE: the initiator aborts) for an unknown account, or when
// the CHECK refuses a balance below zero.
Status Add(const sdk::XaRequest& request, db::PgConnection& db, int sign) {
  Result<Transfer> t = ParseTransfer(request.body);
  if (!t) return t.status();
  Result<db::PgResult> updated =
      db.Query(kAddSql, db::PgParams().Text(t->account_id).Int(sign * t->amount));
  if (!updated) {
    if (updated.status().code() == StatusCode::kConflict) {
      return Status::Conflict("insufficient funds in account " + t->account_id);
    }
    return updated.status();
  }
  if (updated->affected() == 0) return Status::Conflict("no account " + t->account_id);
  return Status::Ok();
}

sdk::HttpReply Message(int status, const std::string& message) {
  return {status, nlohmann::json{{"message", message}}.dump(
                      -1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

}  // namespace

Result<std::unique_ptr<XaBank>> XaBank::Open(const XaBankOptions& options) {
  for (const auto& [id, balance] : options.accounts) {
    if (id.empty() || balance < 0) {
      return Status::InvalidArgument("account: needs a name and a balance of 0 or more");
    }
  }
  Result<std::unique_ptr<sdk::Client>> coordinator = sdk::Client::Create(options.coordinator);
  if (!coordinator) return coordinator.status();
  std::unique_ptr<XaBank> bank(new XaBank(options.conninfo, std::move(*coordinator)));

  Result<std::unique_ptr<db::PgPool::Lease>> lease = bank->reads_.Acquire();
  if (!lease) return lease.status();
  db::PgConnection& db = ***lease;
  if (Status s = db.Run(kSchemaSql); !s.ok()) return s;
  for (const auto& [id, balance] : options.accounts) {
    Result<db::PgResult> created =
        db.Query(kCreateAccountSql, db::PgParams().Text(id).Int(balance));
    if (!created) return created.status();
  }
  lease->reset();

  Result<std::unique_ptr<sdk::PostgresXa>> xa =
      sdk::PostgresXa::Open(options.conninfo, *bank->coordinator_, bank->clock_);
  if (!xa) return xa.status();
  bank->xa_ = std::move(*xa);
  bank->participant_
      .OnXa("/api/TransOutXa",
            bank->xa_->Handler(
                [](const sdk::XaRequest& r, db::PgConnection& db) { return Add(r, db, -1); }))
      .OnXa("/api/TransInXa", bank->xa_->Handler([](const sdk::XaRequest& r, db::PgConnection& db) {
        return Add(r, db, +1);
      }))
      .OnGet("/api/accounts",
             [bank = bank.get()](const sdk::HttpRequest&) { return bank->Accounts(); });
  return bank;
}

XaBank::XaBank(const std::string& conninfo, std::unique_ptr<sdk::Client> coordinator)
    : reads_(conninfo, 4), coordinator_(std::move(coordinator)) {}

XaBank::~XaBank() { Stop(); }

Result<int> XaBank::Start(const std::string& host, int port) {
  return participant_.Start(host, port);
}

void XaBank::Stop() { participant_.Stop(); }

sdk::HttpReply XaBank::Accounts() {
  Result<std::unique_ptr<db::PgPool::Lease>> lease = reads_.Acquire();
  if (!lease) return Message(503, lease.status().message());
  db::PgConnection& db = ***lease;
  // Plain reads never wait for a prepared transaction's row locks: they see the balances as
  // last committed.
  Result<db::PgResult> balances = db.Query(kBalancesSql);
  if (!balances) return Message(503, balances.status().message());
  Result<db::PgResult> prepared = db.Query(kPreparedSql);
  if (!prepared) return Message(503, prepared.status().message());
  nlohmann::json accounts = nlohmann::json::object();
  for (int i = 0; i < balances->rows(); ++i) accounts[balances->Text(i, 0)] = balances->Int(i, 1);
  nlohmann::json names = nlohmann::json::array();
  for (int i = 0; i < prepared->rows(); ++i) names.push_back(prepared->Text(i, 0));
  return {200, nlohmann::json{{"accounts", accounts}, {"prepared", names}}.dump(
                   -1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

}  // namespace settle::xa_bank
