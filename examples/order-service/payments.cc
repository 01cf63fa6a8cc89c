#include "payments.h"

#include <functional>

#include "order.h"
#include "sql.h"

namespace settle::order_service {

Payments::Payments(sdk::SqliteBarrierStore& store, const Clock& clock)
    : store_(store), barrier_(store, clock) {}

Status Payments::CreateTable(sqlite3* db) {
  auto created = Exec(db,
                      "CREATE TABLE IF NOT EXISTS payments (seq INTEGER PRIMARY KEY "
                      "AUTOINCREMENT, gid TEXT NOT NULL UNIQUE, order_id TEXT NOT NULL, "
                      "amount INTEGER NOT NULL, status TEXT NOT NULL)");
  return created ? Status::Ok() : created.status();
}

void Payments::Register(sdk::Participant& participant) {
  participant
      .OnAction(kChargePath, sdk::Guarded(barrier_, std::bind_front(&Payments::Charge, this)))
      .OnCompensate(kRefundPath, sdk::Guarded(barrier_, std::bind_front(&Payments::Refund, this)));
}

Status Payments::Charge(const sdk::BranchRequest& request, sdk::BarrierTransaction& tx) {
  auto order = OrderFromJson(request.body);
  if (!order) return order.status();
  auto charged = Exec(sdk::SqliteBarrierStore::Connection(tx),
                      "INSERT INTO payments (gid, order_id, amount, status) "
                      "VALUES (?1, ?2, ?3, 'charged')",
                      {request.gid, order->order_id, order->amount});
  return charged ? Status::Ok() : charged.status();
}

Status Payments::Refund(const sdk::BranchRequest& request, sdk::BarrierTransaction& tx) {
  auto refunded = Exec(sdk::SqliteBarrierStore::Connection(tx),
                       "UPDATE payments SET status = 'refunded' WHERE gid = ?1", {request.gid});
  return refunded ? Status::Ok() : refunded.status();
}

Result<nlohmann::json> Payments::List() {
  return Read<nlohmann::json>(store_, [](sqlite3* db) -> Result<nlohmann::json> {
    auto rows = Query(db, "SELECT gid, order_id, amount, status FROM payments ORDER BY seq");
    if (!rows) return rows.status();
    nlohmann::json payments = nlohmann::json::array();
    for (const SqlRow& row : *rows) {
      payments.push_back({{"gid", row[0]},
                          {"order_id", row[1]},
                          {"amount", std::stoll(row[2])},
                          {"status", row[3]}});
    }
    return payments;
  });
}

}  // namespace settle::order_service
