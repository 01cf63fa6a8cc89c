#pragma once

#include <map>
#include <string>
#include <vector>

#include "settle/core/clock.h"
#include "settle/storage/instance_leases.h"
#include "settle/storage/store.h"

namespace settle::simulation {

// The database's side of the instance leases for several simulated instances over one SQLite
// file: the rules of PostgreSQL's settle_instances table and trans_global.owner
// (storage/src/pg_instance_leases.cc), kept in memory and judged by the simulation's clock,
// which is the database's. A transaction is claimable by its owner, when it has none, or
// when its owner's lease has run out.
class SimulatedLeases final : public storage::InstanceLeases {
 public:
  SimulatedLeases(storage::Store& database, const Clock& clock)
      : database_(database), clock_(clock) {}

  Result<TimePoint> Renew(const std::string& instance, Duration lease) override;
  Result<TimePoint> DatabaseNow() override { return clock_.Now(); }
  Status Release(const std::string& instance) override;
  Result<bool> Claim(const std::string& gid, const std::string& instance) override;
  Result<std::vector<storage::DueEntry>> ListClaimable(const std::string& instance,
                                                       TimePoint due_by, TimePoint unowned_due_by,
                                                       std::size_t limit) override;

  // Who owns `gid` ("" for nobody), for the history.
  std::string OwnerOf(const std::string& gid) const;

 private:
  bool ClaimableBy(const std::string& gid, const std::string& instance) const;

  storage::Store& database_;
  const Clock& clock_;
  std::map<std::string, TimePoint> lease_until_;  // settle_instances
  std::map<std::string, std::string> owner_;      // trans_global.owner
};

}  // namespace settle::simulation
