#pragma once

#include <memory>
#include <string>

#include "service.h"

namespace settle::order_saga {

// Step 1 of the saga. /api/orders/create records the order as "created";
// /api/orders/cancel, its compensation, marks it "cancelled" (the row stays, as a record of
// what the customer asked for).
class OrderService {
 public:
  static Result<std::unique_ptr<OrderService>> Open(const std::string& db_path, CallLog& log);

  std::string CreateUrl() const { return service_->Url("/api/orders/create"); }
  std::string CancelUrl() const { return service_->Url("/api/orders/cancel"); }

  // "created", "cancelled", or "none" when there is no such order.
  Result<std::string> StatusOf(const std::string& order_id);

  Service& service() { return *service_; }

 private:
  explicit OrderService(std::unique_ptr<Service> service) : service_(std::move(service)) {}
  std::unique_ptr<Service> service_;
};

}  // namespace settle::order_saga
