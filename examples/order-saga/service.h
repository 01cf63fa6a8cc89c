#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "call_log.h"
#include "order.h"
#include "settle/core/clock.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "sql.h"

namespace settle::order_saga {

// What the order, inventory and payment services share: a participant on a free loopback
// port, its own SQLite file holding both its business tables and the barrier, and handlers
// that run inside the barrier and report each call to the log.
class Service {
 public:
  // The business change of one call, in the barrier's local transaction on `db`: OK commits
  // it, Conflict answers FAILURE (the saga rolls back), anything else is retried.
  using Business = std::function<Status(const Order& order, sqlite3* db)>;
  // How the log shows an order to this service: "order=... item=widget qty=2".
  using Describe = std::function<std::string(const Order& order)>;

  // Opens (creates) the database at `db_path` and runs `schema` in it.
  static Result<std::unique_ptr<Service>> Open(std::string name, const std::string& db_path,
                                               const char* schema, Describe describe, CallLog& log);
  ~Service();

  // Register before Start().
  void OnAction(const std::string& path, std::string verb, Business business);
  void OnCompensate(const std::string& path, std::string verb, Business business);

  Status Start();  // listens on 127.0.0.1, any free port
  void Stop();     // waits for calls in progress

  std::string Url(const std::string& path) const;

  // A read of the service's state, or a change of it, outside any branch call.
  Result<std::optional<std::string>> Read(const char* sql, const std::vector<SqlValue>& args);
  Status Write(const char* sql, const std::vector<SqlValue>& args);

 private:
  Service(std::string name, std::unique_ptr<sdk::SqliteBarrierStore> store, Describe describe,
          CallLog& log);
  sdk::BranchHandler Handler(std::string verb, Business business);

  std::string name_;
  SystemClock clock_;
  std::unique_ptr<sdk::SqliteBarrierStore> store_;
  sdk::Barrier barrier_;
  Describe describe_;
  CallLog& log_;
  // Last: stops before what its handlers use goes.
  sdk::Participant participant_;
  int port_ = 0;
};

}  // namespace settle::order_saga
