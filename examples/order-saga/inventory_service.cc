#include "inventory_service.h"

namespace settle::order_saga {
namespace {

constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS stock (item TEXT PRIMARY KEY, quantity INTEGER NOT NULL)";

Status Reserve(const Order& order, sqlite3* db) {
  if (order.quantity <= 0) return Status::Conflict("quantity must be positive");
  // One conditional update: the check and the decrement cannot be split by another order.
  auto reserved =
      Exec(db, "UPDATE stock SET quantity = quantity - ?1 WHERE item = ?2 AND quantity >= ?1",
           {order.quantity, order.item});
  if (!reserved) return reserved.status();
  if (*reserved == 0) return Status::Conflict("insufficient stock of " + order.item);
  return Status::Ok();
}

Status Release(const Order& order, sqlite3* db) {
  auto released = Exec(db, "UPDATE stock SET quantity = quantity + ?1 WHERE item = ?2",
                       {order.quantity, order.item});
  return released ? Status::Ok() : released.status();
}

}  // namespace

Result<std::unique_ptr<InventoryService>> InventoryService::Open(const std::string& db_path,
                                                                 const std::string& item,
                                                                 std::int64_t initial_stock,
                                                                 CallLog& log) {
  auto describe = [](const Order& o) {
    return "order=" + o.order_id + " item=" + o.item + " qty=" + std::to_string(o.quantity);
  };
  auto service = Service::Open("inventory", db_path, kSchema, describe, log);
  if (!service) return service.status();
  // Not a branch call, so outside the barrier; re-running with the same --data-dir keeps the
  // stock that earlier runs left.
  Status stocked =
      (*service)->Write("INSERT OR IGNORE INTO stock VALUES (?1, ?2)", {item, initial_stock});
  if (!stocked.ok()) return stocked;
  (*service)->OnAction("/api/inventory/reserve", "reserve", Reserve);
  (*service)->OnCompensate("/api/inventory/release", "release", Release);
  return std::unique_ptr<InventoryService>(new InventoryService(std::move(*service)));
}

Result<std::int64_t> InventoryService::Stock(const std::string& item) {
  auto quantity = service_->Read("SELECT quantity FROM stock WHERE item = ?1", {item});
  if (!quantity) return quantity.status();
  return quantity->has_value() ? std::stoll(**quantity) : 0;
}

}  // namespace settle::order_saga
