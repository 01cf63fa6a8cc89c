#include "settle/drive/database_clock.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>

namespace settle::drive {
namespace {

Duration Abs(Duration d) { return d < Duration(0) ? -d : d; }

// "30.012 s ahead of" / "2.5 s behind": how this host's clock stands against the database's.
std::string Describe(Duration offset) {
  const double seconds = static_cast<double>(Abs(offset).count()) / 1000.0;
  return fmt::format("{:.3f} s {}", seconds, offset < Duration(0) ? "ahead of" : "behind");
}

}  // namespace

DatabaseClock::DatabaseClock(const Clock& host, ClockSkewSettings settings)
    : host_(host), settings_(settings), tracking_(host) {}

void DatabaseClock::Observe(TimePoint database_now, MonoTime sent, MonoTime received) {
  const std::optional<MonoTime> before = tracking_.target();
  tracking_.Observe(database_now, sent, received);
  const std::optional<MonoTime> after = tracking_.target();
  const Duration moved =
      before ? std::chrono::duration_cast<Duration>(*after - *before) : Duration(0);
  const Duration error = std::chrono::duration_cast<Duration>((received - sent) / 2);
  // The host's wall clock at the middle of the round trip.
  const TimePoint host_middle =
      host_.Now() - std::chrono::duration_cast<Duration>(host_.Monotonic() - sent) + error;
  const Duration offset = database_now - host_middle;
  const bool beyond = settings_.max > Duration(0) && Abs(offset) > settings_.max;
  {
    std::lock_guard lock(mutex_);
    const bool first = !offset_;
    offset_ = offset;
    error_ = error;
    // Logged when it first passes the warning bound, and again whenever it moves by as much.
    if (Abs(offset) >= settings_.warn &&
        (first || Abs(offset - logged_offset_) >= settings_.warn)) {
      spdlog::warn(
          "instance {}: this host's clock is {} the database's (±{} ms); settled takes every "
          "time from the database's clock",
          instance_, Describe(offset), error.count());
      logged_offset_ = offset;
    } else if (Abs(offset) < settings_.warn && Abs(logged_offset_) >= settings_.warn) {
      spdlog::info("instance {}: this host's clock is back within {} ms of the database's",
                   instance_, settings_.warn.count());
      logged_offset_ = offset;
    }
    if (Abs(moved) >= settings_.warn) {
      spdlog::warn(
          "instance {}: the database's clock moved by {} ms against this host's "
          "monotonic clock; settled's clock follows it at 1% of the time passing",
          instance_, moved.count());
    }
  }
  if (beyond && claiming_.exchange(false)) {
    spdlog::error(
        "instance {}: this host's clock is {} the database's, beyond --max-clock-skew {} ms: "
        "this instance stops claiming transactions (others drive them) until the clocks agree "
        "again",
        instance_, Describe(offset), settings_.max.count());
  } else if (!beyond && !claiming_.exchange(true)) {
    spdlog::warn(
        "instance {}: this host's clock is {} the database's, within --max-clock-skew "
        "{} ms again: this instance claims transactions again",
        instance_, Describe(offset), settings_.max.count());
  }
}

ClockReading DatabaseClock::Reading() const {
  ClockReading r;
  r.reference = "database";
  r.claiming = claiming_.load();
  r.max_skew = settings_.max;
  if (auto target = tracking_.target()) {
    r.following = std::chrono::duration_cast<Duration>(*target - tracking_.offset());
  }
  std::lock_guard lock(mutex_);
  r.measured = offset_.has_value();
  r.offset = offset_.value_or(Duration(0));
  r.error = error_;
  return r;
}

}  // namespace settle::drive
