#include "service.h"

namespace settle::order_saga {

Result<std::unique_ptr<Service>> Service::Open(std::string name, const std::string& db_path,
                                               const char* schema, Describe describe,
                                               CallLog& log) {
  auto store = sdk::SqliteBarrierStore::Open(db_path);
  if (!store) return store.status();
  // The business tables go into the barrier's file: one local transaction covers both.
  auto setup = (*store)->Begin();
  if (!setup) return setup.status();
  sqlite3* db = sdk::SqliteBarrierStore::Connection(**setup);
  if (sqlite3_exec(db, schema, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return Status::Unavailable(name + " schema: " + sqlite3_errmsg(db));
  }
  if (Status s = (*setup)->Commit(); !s.ok()) return s;
  return std::unique_ptr<Service>(
      new Service(std::move(name), std::move(*store), std::move(describe), log));
}

Service::Service(std::string name, std::unique_ptr<sdk::SqliteBarrierStore> store,
                 Describe describe, CallLog& log)
    : name_(std::move(name)),
      store_(std::move(store)),
      barrier_(*store_, clock_),
      describe_(std::move(describe)),
      log_(log) {}

Service::~Service() { Stop(); }

void Service::OnAction(const std::string& path, std::string verb, Business business) {
  participant_.OnAction(path, Handler(std::move(verb), std::move(business)));
}

void Service::OnCompensate(const std::string& path, std::string verb, Business business) {
  participant_.OnCompensate(path, Handler(std::move(verb), std::move(business)));
}

// sdk::Guarded, written out: it answers with what the barrier decided, and the log also says
// why (an empty rollback, a duplicate), which is what this example is here to show.
sdk::BranchHandler Service::Handler(std::string verb, Business business) {
  return [this, verb = std::move(verb),
          business = std::move(business)](const sdk::BranchRequest& request) {
    auto order = ParseOrder(request.body);
    Call call{name_, verb, order ? describe_(*order) : "gid=" + request.gid, {}, {}};
    sdk::BarrierResult result = barrier_.Call(request, [&](sdk::BarrierTransaction& tx) {
      return order ? business(*order, sdk::SqliteBarrierStore::Connection(tx)) : order.status();
    });
    call.seen = result.seen;
    call.status = result.reply.status;
    log_.Record(std::move(call));
    return result.reply;
  };
}

Status Service::Start() {
  auto port = participant_.Start("127.0.0.1", 0);
  if (!port) return port.status();
  port_ = *port;
  return Status::Ok();
}

void Service::Stop() { participant_.Stop(); }

std::string Service::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

Result<std::optional<std::string>> Service::Read(const char* sql,
                                                 const std::vector<SqlValue>& args) {
  auto tx = store_->Begin();
  if (!tx) return tx.status();
  // Read only: the transaction is rolled back on return.
  auto row = QueryRow(sdk::SqliteBarrierStore::Connection(**tx), sql, args);
  if (!row) return row.status();
  if (!*row || (*row)->empty()) return std::optional<std::string>();
  return std::optional<std::string>((**row)[0]);
}

Status Service::Write(const char* sql, const std::vector<SqlValue>& args) {
  auto tx = store_->Begin();
  if (!tx) return tx.status();
  auto changed = Exec(sdk::SqliteBarrierStore::Connection(**tx), sql, args);
  return changed ? (*tx)->Commit() : changed.status();
}

}  // namespace settle::order_saga
