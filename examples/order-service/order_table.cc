#include "order_table.h"

#include "sql.h"

namespace settle::order_service {
namespace {

constexpr const char* kColumns = "order_id, gid, item, quantity, amount, status";

Result<std::vector<Order>> Select(sqlite3* db, const std::string& where,
                                  const std::vector<SqlValue>& args) {
  const std::string sql = std::string("SELECT ") + kColumns + " FROM orders " + where;
  auto rows = Query(db, sql.c_str(), args);
  if (!rows) return rows.status();
  std::vector<Order> orders;
  for (const SqlRow& row : *rows) {
    orders.push_back(Order{row[0], row[1], row[2], std::stoll(row[3]), std::stoll(row[4]), row[5]});
  }
  return orders;
}

Result<std::optional<Order>> First(Result<std::vector<Order>> orders) {
  if (!orders) return orders.status();
  if (orders->empty()) return std::optional<Order>();
  return std::optional<Order>(orders->front());
}

}  // namespace

Status CreateOrderTable(sqlite3* db) {
  auto created = Exec(db,
                      "CREATE TABLE IF NOT EXISTS orders ("
                      "seq INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL UNIQUE, "
                      "gid TEXT NOT NULL UNIQUE, item TEXT NOT NULL, quantity INTEGER NOT NULL, "
                      "amount INTEGER NOT NULL, status TEXT NOT NULL, "
                      "saga_submitted INTEGER NOT NULL DEFAULT 0)");
  return created ? Status::Ok() : created.status();
}

Status InsertOrder(sqlite3* db, const Order& order) {
  auto inserted =
      Exec(db,
           "INSERT INTO orders (order_id, gid, item, quantity, amount, status) "
           "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
           {order.order_id, order.gid, order.item, order.quantity, order.amount, order.status});
  return inserted ? Status::Ok() : inserted.status();
}

Result<std::vector<Order>> ListOrders(sqlite3* db) { return Select(db, "ORDER BY seq", {}); }

Result<std::optional<Order>> FindOrder(sqlite3* db, const std::string& order_id) {
  return First(Select(db, "WHERE order_id = ?1", {order_id}));
}

Result<std::optional<Order>> FindOrderByGid(sqlite3* db, const std::string& gid) {
  return First(Select(db, "WHERE gid = ?1", {gid}));
}

Result<std::vector<Order>> OrdersToSubmit(sqlite3* db, const std::string& gid) {
  if (gid.empty()) return Select(db, "WHERE saga_submitted = 0 ORDER BY seq", {});
  return Select(db, "WHERE saga_submitted = 0 AND gid = ?1", {gid});
}

Status MarkSagaSubmitted(sqlite3* db, const std::string& gid) {
  auto marked = Exec(db, "UPDATE orders SET saga_submitted = 1 WHERE gid = ?1", {gid});
  return marked ? Status::Ok() : marked.status();
}

Status SettleOrder(sqlite3* db, const std::string& gid, const std::string& status) {
  auto settled = Exec(db, "UPDATE orders SET status = ?2 WHERE gid = ?1 AND status = 'pending'",
                      {gid, status});
  return settled ? Status::Ok() : settled.status();
}

}  // namespace settle::order_service
