#include "order_service.h"

#include <signal.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>

#include "order.h"
#include "order_table.h"
#include "sql.h"

namespace settle::order_service {
namespace {

using nlohmann::json;

constexpr std::string_view kOrderPrefix = "/orders/";
constexpr std::string_view kStockPrefix = "/stock/";

sdk::HttpReply Reply(int status, const json& body) {
  return {status, body.dump(-1, ' ', false, json::error_handler_t::replace)};
}

sdk::HttpReply Unavailable(const Status& s) { return Reply(503, {{"message", s.message()}}); }

void Say(const std::string& line) {
  std::printf("order-service: %s\n", line.c_str());
  std::fflush(stdout);  // before a crash hook kills the process
}

// The key as the guard compares it: a structured-field string loses its quotes.
std::string_view Unquoted(std::string_view key) {
  if (key.size() >= 2 && key.front() == '"' && key.back() == '"') {
    return key.substr(1, key.size() - 2);
  }
  return key;
}

}  // namespace

Result<std::unique_ptr<OrderService>> OrderService::Open(OrderServiceOptions options) {
  auto client = sdk::Client::Create(options.coordinator);
  if (!client) return client.status();
  auto store = sdk::SqliteBarrierStore::Open(options.db_path);
  if (!store) return store.status();
  auto keys = sdk::SqliteIdempotencyStore::Open(options.db_path, **store);
  if (!keys) return keys.status();
  // The business tables live beside the barrier and idempotency_key tables.
  Status created = Write(**store, [](sqlite3* db) {
    Status s = CreateOrderTable(db);
    if (s.ok()) s = Inventory::CreateTable(db);
    if (s.ok()) s = Payments::CreateTable(db);
    return s;
  });
  if (!created.ok()) return created;
  return std::unique_ptr<OrderService>(new OrderService(std::move(options), std::move(*store),
                                                        std::move(*keys), std::move(*client)));
}

OrderService::OrderService(OrderServiceOptions options,
                           std::unique_ptr<sdk::SqliteBarrierStore> store,
                           std::unique_ptr<sdk::SqliteIdempotencyStore> keys,
                           std::unique_ptr<sdk::Client> client)
    : options_(std::move(options)),
      store_(std::move(store)),
      keys_(std::move(keys)),
      client_(std::move(client)),
      guard_(*keys_, clock_, sdk::IdempotencyOptions{.lease = options_.claim_lease}),
      inventory_(*store_, clock_, options_.initial_stock),
      payments_(*store_, clock_),
      steps_(*store_, clock_),
      barrier_table_(*store_, clock_),
      barrier_cleaner_(barrier_table_),
      key_cleaner_(*keys_, clock_),
      participant_(sdk::ParticipantOptions{.signed_calls = options_.signed_calls,
                                           .authorities = options_.authorities}) {}

OrderService::~OrderService() { Stop(); }

Result<int> OrderService::Start(int port) {
  inventory_.Register(participant_);
  payments_.Register(participant_);
  steps_.Register(participant_);
  participant_.OnPost("/orders", [this](const sdk::HttpRequest& r) { return PostOrder(r); })
      .OnGet("/orders", [this](const sdk::HttpRequest&) { return ListOrders(); })
      .OnGet("/orders/count", [this](const sdk::HttpRequest&) { return CountOrders(); })
      .OnGet("/orders/[^/]+", [this](const sdk::HttpRequest& r) { return GetOrder(r); })
      .OnGet("/stock/[^/]+", [this](const sdk::HttpRequest& r) { return GetStock(r); })
      .OnGet("/payments", [this](const sdk::HttpRequest&) { return ListPayments(); });
  auto bound = participant_.Start("127.0.0.1", port);
  if (!bound) return bound.status();
  outbox_ = std::make_unique<SagaOutbox>(
      *store_, *client_, "http://127.0.0.1:" + std::to_string(*bound), options_.outbox_interval);
  outbox_->Start();
  barrier_cleaner_.Start();
  key_cleaner_.Start();
  return *bound;
}

void OrderService::Stop() {
  participant_.Stop();
  if (outbox_) outbox_->Stop();
  barrier_cleaner_.Stop();
  key_cleaner_.Stop();
}

sdk::HttpReply OrderService::PostOrder(const sdk::HttpRequest& request) {
  bool created = false;
  sdk::HttpReply reply =
      guard_.Handle(request, [&](const sdk::HttpRequest& r, sdk::BarrierTransaction& tx) {
        sdk::HttpReply answer = CreateOrder(r, tx);
        created = answer.status == 201;
        return answer;
      });
  if (reply.status != 201) return reply;
  if (created && options_.crash == CrashPoint::kAfterCommit) {
    Say("committed; crashing before the answer and the saga submit (--crash-after-commit)");
    raise(SIGKILL);
  }
  // The outbox's first try, for a new order and for a retry whose saga is still unsubmitted
  // (a submit failed, or the process died after the commit); the background sweep retries.
  const json answer = json::parse(reply.body, nullptr, false);
  if (answer.is_object() && answer.contains("gid") && answer["gid"].is_string()) {
    outbox_->Submit(answer["gid"].get<std::string>()).IgnoreError();
  }
  return reply;
}

sdk::HttpReply OrderService::CreateOrder(const sdk::HttpRequest& request,
                                         sdk::BarrierTransaction& tx) {
  auto parsed = ParseOrderRequest(request.body);
  if (!parsed) return Reply(400, {{"message", parsed.status().message()}});
  // The guard runs this handler only for a request with a valid key.
  const OrderIds ids = IdsForKey(Unquoted(*request.Header("Idempotency-Key")));
  const Order order{.order_id = ids.order_id,
                    .gid = ids.gid,
                    .item = parsed->item,
                    .quantity = parsed->quantity,
                    .amount = parsed->quantity * kUnitPrice,
                    .status = "pending"};
  Status inserted = InsertOrder(sdk::SqliteBarrierStore::Connection(tx), order);
  if (inserted.code() == StatusCode::kConflict) {
    // Only when a key comes back after the guard forgot it (IdempotencyOptions::expiry).
    return Reply(409, {{"message", "order " + order.order_id +
                                       " exists: this Idempotency-Key was used before"}});
  }
  if (!inserted.ok()) return Unavailable(inserted);
  if (options_.crash == CrashPoint::kBeforeCommit) {
    Say("order " + order.order_id + " written; crashing before the commit (--crash-before-commit)");
    raise(SIGKILL);
  }
  Say("order " + order.order_id + " created: " + std::to_string(order.quantity) + " x " +
      order.item + ", saga " + order.gid);
  return Reply(201, {{"order_id", order.order_id}, {"gid", order.gid}, {"status", order.status}});
}

sdk::HttpReply OrderService::ListOrders() {
  auto orders =
      Read<std::vector<Order>>(*store_, [](sqlite3* db) { return order_service::ListOrders(db); });
  if (!orders) return Unavailable(orders.status());
  json list = json::array();
  for (const Order& order : *orders) list.push_back(ToJson(order));
  return Reply(200, {{"orders", list}});
}

sdk::HttpReply OrderService::CountOrders() {
  auto orders =
      Read<std::vector<Order>>(*store_, [](sqlite3* db) { return order_service::ListOrders(db); });
  if (!orders) return Unavailable(orders.status());
  return Reply(200, {{"orders", orders->size()}});
}

sdk::HttpReply OrderService::GetOrder(const sdk::HttpRequest& request) {
  const std::string id = request.path.substr(kOrderPrefix.size());
  auto order = Read<std::optional<Order>>(*store_, [&](sqlite3* db) { return FindOrder(db, id); });
  if (!order) return Unavailable(order.status());
  if (!*order) return Reply(404, {{"message", "order " + id + " not found"}});
  return Reply(200, ToJson(**order));
}

sdk::HttpReply OrderService::GetStock(const sdk::HttpRequest& request) {
  const std::string item = request.path.substr(kStockPrefix.size());
  auto quantity = inventory_.Stock(item);
  if (!quantity) return Unavailable(quantity.status());
  return Reply(200, {{"item", item}, {"quantity", *quantity}});
}

sdk::HttpReply OrderService::ListPayments() {
  auto payments = payments_.List();
  if (!payments) return Unavailable(payments.status());
  return Reply(200, {{"payments", *payments}});
}

}  // namespace settle::order_service
