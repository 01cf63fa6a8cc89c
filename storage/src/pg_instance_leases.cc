#include "pg_instance_leases.h"

namespace settle::storage {
namespace {

// Whether the owner of g is free to be replaced by $1.
#define SETTLE_CLAIMABLE_BY_1                                                            \
  "(g.owner = $1::text OR g.owner = '' OR NOT EXISTS (SELECT 1 FROM settle_instances i " \
  "WHERE i.id = g.owner AND i.lease_until > settle_now()))"

constexpr std::string_view kRenew =
    "INSERT INTO settle_instances (id, lease_until) VALUES ($1::text, settle_now() + $2::bigint) "
    "ON CONFLICT (id) DO UPDATE SET lease_until = EXCLUDED.lease_until "
    "RETURNING lease_until - $2::bigint";

constexpr std::string_view kDatabaseNow = "SELECT settle_now()";

constexpr std::string_view kRelease = "DELETE FROM settle_instances WHERE id = $1::text";

constexpr std::string_view kClaim =
    "UPDATE trans_global AS g SET owner = $1::text WHERE g.gid = $2::text "
    "AND " SETTLE_CLAIMABLE_BY_1 " RETURNING 1";

constexpr std::string_view kExists = "SELECT 1 FROM trans_global WHERE gid = $1::text";

constexpr std::string_view kListClaimable =
    "SELECT g.gid, g.next_cron_time FROM trans_global AS g "
    "WHERE g.status IN ('prepared', 'submitted', 'aborting') AND g.next_cron_time <= $2::bigint "
    "AND g.paused_at IS NULL "
    "AND (g.owner = $1::text OR (g.owner = '' AND g.next_cron_time <= $3::bigint) OR "
    "(g.owner <> '' AND NOT EXISTS (SELECT 1 FROM settle_instances i "
    "WHERE i.id = g.owner AND i.lease_until > settle_now()))) "
    "ORDER BY g.next_cron_time LIMIT $4::bigint";

#undef SETTLE_CLAIMABLE_BY_1

}  // namespace

Result<TimePoint> PgInstanceLeases::Renew(const std::string& instance, Duration lease) {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> renewed =
      (**c)->Query(kRenew, db::PgParams().Text(instance).Int(lease.count()));
  if (!renewed) return renewed.status();
  return FromUnixMillis(renewed->Int(0, 0));
}

Result<TimePoint> PgInstanceLeases::DatabaseNow() {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> now = (**c)->Query(kDatabaseNow);
  if (!now) return now.status();
  return FromUnixMillis(now->Int(0, 0));
}

Status PgInstanceLeases::Release(const std::string& instance) {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> released = (**c)->Query(kRelease, db::PgParams().Text(instance));
  if (!released) return released.status();
  return Status::Ok();
}

Result<bool> PgInstanceLeases::Claim(const std::string& gid, const std::string& instance) {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> claimed = (**c)->Query(kClaim, db::PgParams().Text(instance).Text(gid));
  if (!claimed) return claimed.status();
  if (claimed->rows() == 1) return true;
  Result<db::PgResult> exists = (**c)->Query(kExists, db::PgParams().Text(gid));
  if (!exists) return exists.status();
  if (exists->rows() == 0) return Status::NotFound("gid " + gid + " not found");
  return false;
}

Result<std::vector<DueEntry>> PgInstanceLeases::ListClaimable(const std::string& instance,
                                                              TimePoint due_by,
                                                              TimePoint unowned_due_by,
                                                              std::size_t limit) {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows =
      (**c)->Query(kListClaimable, db::PgParams()
                                       .Text(instance)
                                       .Int(ToUnixMillis(due_by))
                                       .Int(ToUnixMillis(unowned_due_by))
                                       .Int(static_cast<std::int64_t>(limit)));
  if (!rows) return rows.status();
  std::vector<DueEntry> entries;
  entries.reserve(static_cast<std::size_t>(rows->rows()));
  for (int row = 0; row < rows->rows(); ++row) {
    entries.push_back(DueEntry{rows->Text(row, 0), FromUnixMillis(rows->Int(row, 1))});
  }
  return entries;
}

}  // namespace settle::storage
