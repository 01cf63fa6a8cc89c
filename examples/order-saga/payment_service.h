#pragma once

#include <memory>
#include <string>

#include "service.h"

namespace settle::order_saga {

// Step 3 of the saga. /api/payments/charge records a charge of the order's amount (409
// FAILURE, "card declined", when the service is told to decline every card, or when the
// amount is not positive); /api/payments/refund, its compensation, marks the charge refunded.
class PaymentService {
 public:
  static Result<std::unique_ptr<PaymentService>> Open(const std::string& db_path,
                                                      bool decline_cards, CallLog& log);

  std::string ChargeUrl() const { return service_->Url("/api/payments/charge"); }
  std::string RefundUrl() const { return service_->Url("/api/payments/refund"); }

  // "charged 50", "refunded 50", or "none" when the order was never charged.
  Result<std::string> StatusOf(const std::string& order_id);

  Service& service() { return *service_; }

 private:
  explicit PaymentService(std::unique_ptr<Service> service) : service_(std::move(service)) {}
  std::unique_ptr<Service> service_;
};

}  // namespace settle::order_saga
