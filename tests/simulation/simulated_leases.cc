#include "simulated_leases.h"

#include <algorithm>

namespace settle::simulation {

Result<TimePoint> SimulatedLeases::Renew(const std::string& instance, Duration lease) {
  const TimePoint now = clock_.Now();
  lease_until_[instance] = now + lease;
  return now;
}

Status SimulatedLeases::Release(const std::string& instance) {
  lease_until_.erase(instance);
  return Status::Ok();
}

bool SimulatedLeases::ClaimableBy(const std::string& gid, const std::string& instance) const {
  auto owner = owner_.find(gid);
  if (owner == owner_.end() || owner->second.empty() || owner->second == instance) return true;
  auto lease = lease_until_.find(owner->second);
  return lease == lease_until_.end() || lease->second <= clock_.Now();
}

Result<bool> SimulatedLeases::Claim(const std::string& gid, const std::string& instance) {
  auto tx = database_.Load(gid);
  if (!tx.ok()) return tx.status();
  if (!tx->has_value()) return Status::NotFound("transaction " + gid + " not found");
  if (!ClaimableBy(gid, instance)) return false;
  owner_[gid] = instance;
  return true;
}

Result<std::vector<storage::DueEntry>> SimulatedLeases::ListClaimable(const std::string& instance,
                                                                      TimePoint due_by,
                                                                      TimePoint unowned_due_by,
                                                                      std::size_t limit) {
  auto unfinished = database_.ListUnfinished();
  if (!unfinished.ok()) return unfinished.status();
  std::vector<storage::DueEntry> out;
  for (const storage::DueEntry& entry : *unfinished) {
    const TimePoint due = entry.next_cron_time.value_or(TimePoint::max());
    if (due > due_by) continue;
    const std::string owner = OwnerOf(entry.gid);
    if (owner.empty() ? due <= unowned_due_by : ClaimableBy(entry.gid, instance)) {
      out.push_back(entry);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.next_cron_time.value_or(TimePoint::max()) <
           b.next_cron_time.value_or(TimePoint::max());
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::string SimulatedLeases::OwnerOf(const std::string& gid) const {
  auto owner = owner_.find(gid);
  return owner == owner_.end() ? "" : owner->second;
}

}  // namespace settle::simulation
