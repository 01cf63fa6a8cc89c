#include "order_service.h"

#include <signal.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "settle/core/protocol.h"
#include "settle/sdk/msg.h"
#include "sqlite_statement.h"

namespace settle::order_msg {
namespace {

using nlohmann::json;

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS orders (order_id TEXT PRIMARY KEY, customer TEXT NOT NULL, "
    "amount INTEGER NOT NULL, message_gid TEXT NOT NULL)";
constexpr const char* kQueryPreparedPath = "/api/orders/QueryPrepared";
constexpr std::string_view kOrderPrefix = "/api/orders/";

struct Order {
  std::string order_id;
  std::string customer;
  std::int64_t amount = 0;
};

sdk::HttpReply Reply(int status, const json& body) {
  return {status, body.dump(-1, ' ', false, json::error_handler_t::replace)};
}

Result<Order> ParseOrder(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("the body must be a JSON object");
  Order order;
  // The message's gid is "order-<order_id>": one message per order.
  if (!j.contains("order_id") || !j["order_id"].is_string() ||
      j["order_id"].get<std::string>().empty() ||
      !IsValidGid("order-" + j["order_id"].get<std::string>())) {
    return Status::InvalidArgument("order_id: 1 to 122 characters of [A-Za-z0-9_.:-]");
  }
  if (!j.contains("customer") || !j["customer"].is_string() ||
      j["customer"].get<std::string>().empty()) {
    return Status::InvalidArgument("customer: a non-empty string");
  }
  if (!j.contains("amount") || !j["amount"].is_number_integer() || j["amount"] <= 0 ||
      j["amount"] > 1'000'000'000) {
    return Status::InvalidArgument("amount: an integer from 1 to 1000000000");
  }
  order.order_id = j["order_id"].get<std::string>();
  order.customer = j["customer"].get<std::string>();
  order.amount = j["amount"].get<std::int64_t>();
  return order;
}

void Say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);  // before a crash hook kills the process
}

// SQLite calls this after each commit on the connection it is set on (WAL mode), once the
// transaction is durable: the one moment --crash-after-commit is about.
int KillAfterCommit(void*, sqlite3*, const char*, int) {
  Say("order service: committed; crashing before the submit (--crash-after-commit)");
  raise(SIGKILL);
  return SQLITE_OK;
}

}  // namespace

Result<std::unique_ptr<OrderService>> OrderService::Open(OrderServiceOptions options) {
  auto client = sdk::Client::Create(options.coordinator);
  if (!client) return client.status();
  auto store = sdk::SqliteBarrierStore::Open(options.db_path);
  if (!store) return store.status();
  auto setup = (*store)->Begin();  // the orders table lives beside the barrier table
  if (!setup) return setup.status();
  if (Status s = Run(sdk::SqliteBarrierStore::Connection(**setup), kSchema); !s.ok()) {
    return s;
  }
  if (Status s = (*setup)->Commit(); !s.ok()) return s;
  return std::unique_ptr<OrderService>(
      new OrderService(std::move(options), std::move(*store), std::move(*client)));
}

OrderService::OrderService(OrderServiceOptions options,
                           std::unique_ptr<sdk::SqliteBarrierStore> store,
                           std::unique_ptr<sdk::Client> client)
    : options_(std::move(options)),
      store_(std::move(store)),
      barrier_(*store_, clock_),
      client_(std::move(client)) {}

OrderService::~OrderService() { Stop(); }

Result<int> OrderService::Start(const std::string& host, int port) {
  participant_.OnQueryPrepared(kQueryPreparedPath, barrier_)
      .OnPost("/api/orders", [this](const sdk::HttpRequest& r) { return PlaceOrder(r); })
      .OnGet("/api/orders", [this](const sdk::HttpRequest&) { return ListOrders(); })
      .OnGet(R"(/api/orders/([^/]+))", [this](const sdk::HttpRequest& r) { return GetOrder(r); });
  auto bound = participant_.Start(host, port);
  if (!bound) return bound.status();
  query_prepared_url_ = "http://" + host + ":" + std::to_string(*bound) + kQueryPreparedPath;
  return *bound;
}

void OrderService::Stop() { participant_.Stop(); }

sdk::HttpReply OrderService::PlaceOrder(const sdk::HttpRequest& request) {
  Result<Order> order = ParseOrder(request.body);
  if (!order) return Reply(400, {{"message", order.status().message()}});
  const std::string gid = "order-" + order->order_id;
  const json points = {
      {"customer", order->customer}, {"points", order->amount / 10}, {"order_id", order->order_id}};

  sdk::Msg msg(*client_, gid);
  msg.Add(options_.loyalty + "/api/loyalty/AddPoints", points.dump());
  msg.options().timeout_to_fail = options_.timeout_to_fail;
  Result<sdk::Outcome> sent =
      msg.DoAndSubmit(query_prepared_url_, barrier_, [&](sdk::BarrierTransaction& tx) {
        sqlite3* db = sdk::SqliteBarrierStore::Connection(tx);
        Status inserted = Run(db, "INSERT INTO orders VALUES (?1, ?2, ?3, ?4)",
                              {order->order_id, order->customer, order->amount, gid});
        if (!inserted.ok()) return inserted;  // Conflict: placed before; the message aborts
        if (options_.crash == CrashPoint::kBeforeCommit) {
          Say("order " + order->order_id +
              ": crashing before the local commit (--crash-before-commit)");
          raise(SIGKILL);
        }
        // Fires on this transaction's COMMIT, the next one on this connection.
        if (options_.crash == CrashPoint::kAfterCommit) {
          Say("order " + order->order_id + ": committing (--crash-after-commit)");
          sqlite3_wal_hook(db, &KillAfterCommit, nullptr);
        }
        return Status::Ok();
      });
  if (!sent) {
    Say("order " + order->order_id + ": not placed: " + sent.status().ToString());
    const int code = sent.status().code() == StatusCode::kConflict ||
                             sent.status().code() == StatusCode::kAlreadyExists
                         ? 409
                         : 503;
    return Reply(code, {{"message", sent.status().message()}, {"gid", gid}});
  }
  const std::string status(ToString(sent->status));
  Say("order " + order->order_id + ": placed; message " + gid + " " + status);
  return Reply(200, {{"order_id", order->order_id}, {"gid", gid}, {"status", status}});
}

sdk::HttpReply OrderService::ListOrders() {
  auto tx = store_->Begin();  // read only: rolled back on return
  if (!tx) return Reply(503, {{"message", tx.status().message()}});
  auto rows = Query(sdk::SqliteBarrierStore::Connection(**tx),
                    "SELECT order_id, customer, amount, message_gid FROM orders ORDER BY rowid");
  if (!rows) return Reply(503, {{"message", rows.status().message()}});
  json orders = json::array();
  for (const auto& row : *rows) {
    orders.push_back({{"order_id", row[0]},
                      {"customer", row[1]},
                      {"amount", std::stoll(row[2])},
                      {"gid", row[3]}});
  }
  return Reply(200, {{"orders", orders}});
}

sdk::HttpReply OrderService::GetOrder(const sdk::HttpRequest& request) {
  const std::string id = request.path.substr(kOrderPrefix.size());
  auto tx = store_->Begin();  // read only: rolled back on return
  if (!tx) return Reply(503, {{"message", tx.status().message()}});
  auto row = QueryRow(sdk::SqliteBarrierStore::Connection(**tx),
                      "SELECT customer, amount, message_gid FROM orders WHERE order_id = ?1", {id});
  if (!row) return Reply(503, {{"message", row.status().message()}});
  if (!*row) return Reply(404, {{"message", "order " + id + " not found"}});
  return Reply(200, {{"order_id", id},
                     {"customer", (**row)[0]},
                     {"amount", std::stoll((**row)[1])},
                     {"gid", (**row)[2]}});
}

}  // namespace settle::order_msg
