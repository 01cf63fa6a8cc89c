#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "service.h"

namespace settle::order_saga {

// Step 2 of the saga. /api/inventory/reserve takes the ordered quantity out of stock (409
// FAILURE when there is not enough); /api/inventory/release, its compensation, puts it back.
class InventoryService {
 public:
  // Stocks `item` with `initial_stock` units, unless the database already knows the item.
  static Result<std::unique_ptr<InventoryService>> Open(const std::string& db_path,
                                                        const std::string& item,
                                                        std::int64_t initial_stock, CallLog& log);

  std::string ReserveUrl() const { return service_->Url("/api/inventory/reserve"); }
  std::string ReleaseUrl() const { return service_->Url("/api/inventory/release"); }

  // Units of `item` in stock (0 for an unknown item).
  Result<std::int64_t> Stock(const std::string& item);

  Service& service() { return *service_; }

 private:
  explicit InventoryService(std::unique_ptr<Service> service) : service_(std::move(service)) {}
  std::unique_ptr<Service> service_;
};

}  // namespace settle::order_saga
