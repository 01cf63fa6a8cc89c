#include "inventory.h"

#include <functional>

#include "order.h"
#include "sql.h"

namespace settle::order_service {

Inventory::Inventory(sdk::SqliteBarrierStore& store, const Clock& clock, std::int64_t initial_stock)
    : store_(store), barrier_(store, clock), initial_stock_(initial_stock) {}

Status Inventory::CreateTable(sqlite3* db) {
  auto created = Exec(db,
                      "CREATE TABLE IF NOT EXISTS stock (item TEXT PRIMARY KEY, "
                      "quantity INTEGER NOT NULL)");
  return created ? Status::Ok() : created.status();
}

void Inventory::Register(sdk::Participant& participant) {
  participant
      .OnAction(kReservePath, sdk::Guarded(barrier_, std::bind_front(&Inventory::Reserve, this)))
      .OnCompensate(kReleasePath,
                    sdk::Guarded(barrier_, std::bind_front(&Inventory::Release, this)));
}

Status Inventory::Reserve(const sdk::BranchRequest& request, sdk::BarrierTransaction& tx) {
  auto order = OrderFromJson(request.body);
  if (!order) return order.status();
  sqlite3* db = sdk::SqliteBarrierStore::Connection(tx);
  auto stocked =
      Exec(db, "INSERT OR IGNORE INTO stock VALUES (?1, ?2)", {order->item, initial_stock_});
  if (!stocked) return stocked.status();
  // One conditional update: the check and the decrement cannot be split by another order.
  auto reserved =
      Exec(db, "UPDATE stock SET quantity = quantity - ?1 WHERE item = ?2 AND quantity >= ?1",
           {order->quantity, order->item});
  if (!reserved) return reserved.status();
  if (*reserved == 0) {
    return Status::Conflict("not enough " + order->item + " in stock for " +
                            std::to_string(order->quantity));
  }
  return Status::Ok();
}

Status Inventory::Release(const sdk::BranchRequest& request, sdk::BarrierTransaction& tx) {
  auto order = OrderFromJson(request.body);
  if (!order) return order.status();
  auto released = Exec(sdk::SqliteBarrierStore::Connection(tx),
                       "UPDATE stock SET quantity = quantity + ?1 WHERE item = ?2",
                       {order->quantity, order->item});
  return released ? Status::Ok() : released.status();
}

Result<std::int64_t> Inventory::Stock(const std::string& item) {
  return Read<std::int64_t>(store_, [&](sqlite3* db) -> Result<std::int64_t> {
    auto rows = Query(db, "SELECT quantity FROM stock WHERE item = ?1", {item});
    if (!rows) return rows.status();
    return rows->empty() ? initial_stock_ : std::stoll(rows->front()[0]);
  });
}

}  // namespace settle::order_service
