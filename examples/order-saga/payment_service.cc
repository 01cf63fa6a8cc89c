#include "payment_service.h"

namespace settle::order_saga {
namespace {

constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS payments (order_id TEXT PRIMARY KEY, amount INTEGER NOT NULL,"
    " status TEXT NOT NULL)";

Status Refund(const Order& order, sqlite3* db) {
  auto refunded =
      Exec(db, "UPDATE payments SET status = 'refunded' WHERE order_id = ?1", {order.order_id});
  return refunded ? Status::Ok() : refunded.status();
}

}  // namespace

Result<std::unique_ptr<PaymentService>> PaymentService::Open(const std::string& db_path,
                                                             bool decline_cards, CallLog& log) {
  auto describe = [](const Order& o) {
    return "order=" + o.order_id + " amount=" + std::to_string(o.amount);
  };
  auto service = Service::Open("payment", db_path, kSchema, describe, log);
  if (!service) return service.status();
  auto charge = [decline_cards](const Order& order, sqlite3* db) {
    // A Conflict is the business saying no: the saga compensates instead of retrying.
    if (decline_cards) return Status::Conflict("card declined");
    if (order.amount <= 0) return Status::Conflict("amount must be positive");
    auto charged =
        Exec(db, "INSERT INTO payments VALUES (?1, ?2, 'charged')", {order.order_id, order.amount});
    return charged ? Status::Ok() : charged.status();
  };
  (*service)->OnAction("/api/payments/charge", "charge", charge);
  (*service)->OnCompensate("/api/payments/refund", "refund", Refund);
  return std::unique_ptr<PaymentService>(new PaymentService(std::move(*service)));
}

Result<std::string> PaymentService::StatusOf(const std::string& order_id) {
  auto payment = service_->Read("SELECT status || ' ' || amount FROM payments WHERE order_id = ?1",
                                {order_id});
  if (!payment) return payment.status();
  return payment->value_or("none");
}

}  // namespace settle::order_saga
