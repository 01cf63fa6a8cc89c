#include "order_service.h"

namespace settle::order_saga {
namespace {

constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, item TEXT NOT NULL,"
    " quantity INTEGER NOT NULL, amount INTEGER NOT NULL, status TEXT NOT NULL)";

Status Create(const Order& order, sqlite3* db) {
  auto created = Exec(db, "INSERT INTO orders VALUES (?1, ?2, ?3, ?4, 'created')",
                      {order.order_id, order.item, order.quantity, order.amount});
  return created ? Status::Ok() : created.status();
}

Status Cancel(const Order& order, sqlite3* db) {
  auto cancelled =
      Exec(db, "UPDATE orders SET status = 'cancelled' WHERE id = ?1", {order.order_id});
  return cancelled ? Status::Ok() : cancelled.status();
}

}  // namespace

Result<std::unique_ptr<OrderService>> OrderService::Open(const std::string& db_path, CallLog& log) {
  auto describe = [](const Order& o) {
    return "order=" + o.order_id + " item=" + o.item + " qty=" + std::to_string(o.quantity) +
           " amount=" + std::to_string(o.amount);
  };
  auto service = Service::Open("order", db_path, kSchema, describe, log);
  if (!service) return service.status();
  (*service)->OnAction("/api/orders/create", "create", Create);
  (*service)->OnCompensate("/api/orders/cancel", "cancel", Cancel);
  return std::unique_ptr<OrderService>(new OrderService(std::move(*service)));
}

Result<std::string> OrderService::StatusOf(const std::string& order_id) {
  auto status = service_->Read("SELECT status FROM orders WHERE id = ?1", {order_id});
  if (!status) return status.status();
  return status->value_or("none");
}

}  // namespace settle::order_saga
