#pragma once

#include "settle/db/pg_pool.h"
#include "settle/storage/instance_leases.h"

namespace settle::storage {

// InstanceLeases in PostgreSQL (schema version 3): each call is one autocommitted statement on
// a pooled connection.
//
// Lifetime: `pool` must outlive it (PostgresStore owns both). Thread-safe as the pool is: calls
// from any threads at once.
class PgInstanceLeases final : public InstanceLeases {
 public:
  explicit PgInstanceLeases(db::PgPool& pool) : pool_(pool) {}

  Result<TimePoint> Renew(const std::string& instance, Duration lease) override;
  Result<TimePoint> DatabaseNow() override;
  Status Release(const std::string& instance) override;
  Result<bool> Claim(const std::string& gid, const std::string& instance) override;
  Result<std::vector<DueEntry>> ListClaimable(const std::string& instance, TimePoint due_by,
                                              TimePoint unowned_due_by, std::size_t limit) override;

 private:
  db::PgPool& pool_;
};

}  // namespace settle::storage
