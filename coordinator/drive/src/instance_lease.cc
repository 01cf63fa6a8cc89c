#include "settle/drive/instance_lease.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace settle::drive {
namespace {

// Transactions scheduled per poll; the rest come with the next polls.
constexpr std::size_t kPollLimit = 10000;

}  // namespace

InstanceLease::InstanceLease(storage::InstanceLeases& leases, const Clock& clock,
                             InstanceLeaseSettings settings)
    : leases_(leases), clock_(clock), settings_(std::move(settings)) {}

InstanceLease::~InstanceLease() { Stop(false); }

Status InstanceLease::Start(ScheduleFn schedule) {
  schedule_ = std::move(schedule);
  if (Status s = Renew(); !s.ok()) return s;
  // Everything this instance may drive, whenever due: what a single instance's start does
  // with ListUnfinished.
  if (SkewAllowsClaims()) {
    Poll(TimePoint::max(), TimePoint::max());
  } else {
    StandDown();
  }
  started_ = true;
  if (settings_.own_thread) {
    thread_ = std::make_unique<PeriodicThread>(settings_.poll, [this] { RunOnce(); });
    thread_->Start();
  }
  return Status::Ok();
}

void InstanceLease::RunOnce() {
  if (!SkewAllowsClaims()) {
    StandDown();
    return;
  }
  Renew().IgnoreError();  // logged there; the fence stops calls if it keeps failing
  if (!SkewAllowsClaims()) {
    StandDown();
    return;
  }
  // An unowned transaction is left to the instance that created it (it claims it in its
  // first pass, within milliseconds) unless it has been due for a while.
  const TimePoint now = clock_.Now();
  Poll(now + 2 * settings_.poll, now - 2 * settings_.poll);
}

void InstanceLease::Stop(bool release) {
  if (!started_) return;
  started_ = false;
  if (thread_ != nullptr) {
    thread_->Stop();
    thread_.reset();
  }
  held_until_.store(0);
  if (release) {
    if (Status s = leases_.Release(settings_.instance_id); !s.ok()) {
      spdlog::warn("instance {}: releasing the lease: {} (others take over when it runs out)",
                   settings_.instance_id, s.ToString());
    }
  }
}

bool InstanceLease::SkewAllowsClaims() const {
  return database_clock_ == nullptr || database_clock_->ClaimsAllowed();
}

void InstanceLease::StandDown() {
  // The lease is not renewed, not released: passes already running may still be calling, and
  // the fence (Remaining) ends their calls before the lease runs out and others take over, as
  // for a lease that lapses.
  stood_down_.store(true);
  const MonoTime sent = clock_.Monotonic();
  Result<TimePoint> now = leases_.DatabaseNow();
  if (!now) {
    if (clock_reads_.Failed()) {
      spdlog::error("instance {}: reading the database's clock: {} (said again when it works)",
                    settings_.instance_id, now.status().ToString());
    }
    return;
  }
  if (const std::uint64_t failed = clock_reads_.Succeeded(); failed > 0) {
    spdlog::warn("instance {}: the database's clock is read again, after {} failed reads",
                 settings_.instance_id, failed);
  }
  database_clock_->Observe(*now, sent, clock_.Monotonic());
}

Status InstanceLease::Renew() {
  const MonoTime sent = clock_.Monotonic();
  Result<TimePoint> renewed = leases_.Renew(settings_.instance_id, settings_.lease);
  Status s = renewed ? Status::Ok() : renewed.status();
  if (renewed && database_clock_ != nullptr) {
    database_clock_->Observe(*renewed, sent, clock_.Monotonic());
  }
  if (!s.ok()) {
    if (renewals_.Failed()) {
      spdlog::error("instance {}: renewing the lease: {} (said again when it works)",
                    settings_.instance_id, s.ToString());
    }
    if (Remaining() <= Duration(0)) {
      if (!lapsed_.exchange(true)) {
        spdlog::error("instance {}: lease lapsed: no branch calls until it is renewed",
                      settings_.instance_id);
      }
      std::lock_guard lock(mutex_);
      owned_.clear();  // another instance may claim them now
    }
    return s;
  }
  if (Remaining() <= Duration(0)) {
    // Lapsed before this renewal: whatever was owned may have been taken over meanwhile.
    std::lock_guard lock(mutex_);
    owned_.clear();
  }
  if (const std::uint64_t failed = renewals_.Succeeded(); failed > 0) {
    spdlog::warn("instance {}: lease renewed again, after {} failed renewals",
                 settings_.instance_id, failed);
  }
  if (lapsed_.exchange(false)) {
    spdlog::warn("instance {}: lease renewed after lapsing", settings_.instance_id);
  }
  stood_down_.store(false);
  // Two renewals may overlap (the thread's and a RunOnce): the one sent later counts, whichever
  // returns last. The database keeps the expiry of the write it applied last, which is no
  // earlier than the later send plus the lease.
  const MonoTime::rep until = (sent + MonoTime(settings_.lease)).count();
  MonoTime::rep held = held_until_.load();
  while (held < until && !held_until_.compare_exchange_weak(held, until)) {
  }
  return Status::Ok();
}

void InstanceLease::Poll(TimePoint due_by, TimePoint unowned_due_by) {
  Result<std::vector<storage::DueEntry>> due =
      leases_.ListClaimable(settings_.instance_id, due_by, unowned_due_by, kPollLimit);
  if (!due) {
    if (polls_.Failed()) {
      spdlog::error("instance {}: listing transactions to drive: {} (said again when it works)",
                    settings_.instance_id, due.status().ToString());
    }
    return;
  }
  if (const std::uint64_t failed = polls_.Succeeded(); failed > 0) {
    spdlog::warn("instance {}: transactions to drive are listed again, after {} failed polls",
                 settings_.instance_id, failed);
  }
  for (const storage::DueEntry& entry : *due) {
    schedule_(entry.gid, entry.next_cron_time.value_or(clock_.Now()));
  }
}

Result<bool> InstanceLease::Claim(const std::string& gid) {
  // Standing down for its clock: the transaction is left to the others, whose poll finds it
  // (a pass here ends without retrying).
  if (!SkewAllowsClaims()) return false;
  if (Remaining() <= Duration(0)) {
    return Status::Unavailable("instance " + settings_.instance_id + " does not hold its lease");
  }
  {
    std::lock_guard lock(mutex_);
    if (owned_.count(gid) > 0) return true;
  }
  Result<bool> claimed = leases_.Claim(gid, settings_.instance_id);
  if (claimed && *claimed) {
    std::lock_guard lock(mutex_);
    owned_.insert(gid);
  }
  return claimed;
}

void InstanceLease::Forget(const std::string& gid) {
  std::lock_guard lock(mutex_);
  owned_.erase(gid);
}

bool InstanceLease::StillOwns(const std::string& gid) const {
  std::lock_guard lock(mutex_);
  return owned_.count(gid) > 0;
}

Duration InstanceLease::Remaining() const {
  // A tenth of the lease is kept back: the database's clock and this one may tick at slightly
  // different rates, and a call's end is only known to within scheduling delays.
  const MonoTime until{held_until_.load()};
  const MonoTime remaining = until - MonoTime(settings_.lease / 10) - clock_.Monotonic();
  return std::chrono::duration_cast<Duration>(remaining);
}

}  // namespace settle::drive
