#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/db/pg_pool.h"
#include "settle/sdk/client.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/postgres_xa.h"

namespace settle::xa_bank {

struct XaBankOptions {
  std::string conninfo;     // the bank's PostgreSQL database (a postgresql:// URL)
  std::string coordinator;  // settled's API base, where branches are registered
  // Accounts created when missing (an existing account keeps its balance).
  std::map<std::string, std::int64_t> accounts;
};

// A bank whose accounts live in PostgreSQL (`account`, CHECK (balance >= 0)) and that takes
// part in XA transfers: each branch is a local transaction of its database, prepared during
// the initiator's call and committed or rolled back by the coordinator (PostgresXa).
//
//   POST /api/TransOutXa, /api/TransInXa  the branch URLs (action and phase 2), called with
//                                         {"account_id":"A","amount":30}; TransOut answers
//                                         409 FAILURE for an unknown account or when the
//                                         balance would go below 0, TransIn for an unknown one
//   GET /api/accounts                     committed balances, and the prepared transactions
//                                         that hold locks on the accounts
//
// Thread-safe; Stop() (or the destructor) waits for calls in progress.
class XaBank {
 public:
  // Connects, creates the tables (account and the SDK's barrier) and the missing accounts.
  // InvalidArgument for a bad coordinator URL or account; Unavailable without the database.
  static Result<std::unique_ptr<XaBank>> Open(const XaBankOptions& options);
  ~XaBank();

  // Serves on host:port (0: any free port); returns the port.
  Result<int> Start(const std::string& host, int port);
  void Stop();

 private:
  XaBank(const std::string& conninfo, std::unique_ptr<sdk::Client> coordinator);
  sdk::HttpReply Accounts();

  SystemClock clock_;
  db::PgPool reads_;
  std::unique_ptr<sdk::Client> coordinator_;
  std::unique_ptr<sdk::PostgresXa> xa_;
  sdk::Participant participant_;  // last: stopped before what its handlers use goes away
};

}  // namespace settle::xa_bank
