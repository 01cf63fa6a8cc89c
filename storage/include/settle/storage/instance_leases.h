#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/storage/store.h"

namespace settle::storage {

// Leases that let several coordinator instances share one database, each unfinished
// transaction driven by one instance at a time.
//
// Each instance holds an instance lease, renewed well before it runs out; a transaction's
// owner is an instance id. An instance claims a transaction with a conditional write that
// succeeds only if the transaction has no owner, is its own, or belongs to an instance whose
// lease has run out: so a transaction passes to another instance only once its owner is dead
// (or cut off from the database) for a whole lease. Lease expiry is judged by the database's
// clock, never by an instance's, so clock skew between instances does not matter.
//
// Every change is durable before the call returns. Thread-safety: any method from any thread.
class InstanceLeases {
 public:
  virtual ~InstanceLeases() = default;

  // Extends `instance`'s lease to `lease` from now (database time), creating it if needed.
  // Returns the database's clock when it did.
  virtual Result<TimePoint> Renew(const std::string& instance, Duration lease) = 0;

  // The database's clock (an instance that holds no lease measures its clock with it).
  virtual Result<TimePoint> DatabaseNow() = 0;

  // Ends `instance`'s lease now, so that others may claim its transactions at once (a clean
  // shutdown, after its last pass).
  virtual Status Release(const std::string& instance) = 0;

  // Makes `instance` the owner of `gid` if it has no live other owner. true: `instance` owns
  // it; false: another live instance does. NotFound for an unknown gid.
  virtual Result<bool> Claim(const std::string& gid, const std::string& instance) = 0;

  // Unfinished transactions that `instance` may drive, earliest due first, at most `limit`: its
  // own and those of instances whose lease ran out, due by `due_by`, and unowned ones due by
  // `unowned_due_by` (earlier: the instance that just created one claims it itself, unless it
  // died first).
  virtual Result<std::vector<DueEntry>> ListClaimable(const std::string& instance, TimePoint due_by,
                                                      TimePoint unowned_due_by,
                                                      std::size_t limit) = 0;
};

}  // namespace settle::storage
