#include "settle/core/tracking_clock.h"

#include <algorithm>
#include <cmath>

namespace settle {

TrackingClock::TrackingClock(const Clock& base, double max_slew)
    : base_(base), max_slew_(max_slew) {}

void TrackingClock::SlewTo(MonoTime mono) const {
  if (!target_) return;
  if (offset_ == *target_) {
    caught_up_.store(offset_.count(), std::memory_order_release);
    return;
  }
  const MonoTime elapsed = std::max(MonoTime(0), mono - slewed_at_);
  slewed_at_ = std::max(slewed_at_, mono);
  const MonoTime gap = *target_ - offset_;
  if (gap == MonoTime(0)) return;
  const auto step = MonoTime(
      static_cast<MonoTime::rep>(std::floor(static_cast<double>(elapsed.count()) * max_slew_)));
  offset_ += gap > MonoTime(0) ? std::min(gap, step) : std::max(gap, -step);
  if (offset_ == *target_) caught_up_.store(offset_.count(), std::memory_order_release);
}

TimePoint TrackingClock::Now() const {
  const MonoTime::rep caught_up = caught_up_.load(std::memory_order_acquire);
  if (caught_up != kNotCaughtUp) {
    return TimePoint(std::chrono::duration_cast<Duration>(base_.Monotonic() + MonoTime(caught_up)));
  }
  std::lock_guard lock(mutex_);
  if (!target_) return base_.Now();
  const MonoTime mono = base_.Monotonic();
  SlewTo(mono);
  // Monotonic readings of several threads may interleave with the lock: never go back.
  last_now_ = std::max(last_now_, mono + offset_);
  return TimePoint(std::chrono::duration_cast<Duration>(last_now_));
}

Duration TrackingClock::Observe(TimePoint reference, MonoTime sent, MonoTime received) {
  const MonoTime middle = sent + (received - sent) / 2;
  const MonoTime wanted = MonoTime(reference.time_since_epoch()) - middle;
  std::lock_guard lock(mutex_);
  if (!target_) {
    target_ = wanted;
    offset_ = wanted;
    slewed_at_ = middle;
    caught_up_.store(offset_.count(), std::memory_order_release);
    return Duration(0);
  }
  SlewTo(middle);
  // Within the reference's resolution of the target: nothing new.
  const MonoTime moved = wanted - *target_;
  if (moved >= Duration(1) || moved <= -Duration(1)) {
    target_ = wanted;
    if (offset_ != wanted) caught_up_.store(kNotCaughtUp, std::memory_order_release);
  }
  return std::chrono::duration_cast<Duration>(*target_ - offset_);
}

MonoTime TrackingClock::offset() const {
  std::lock_guard lock(mutex_);
  SlewTo(base_.Monotonic());
  return offset_;
}

std::optional<MonoTime> TrackingClock::target() const {
  std::lock_guard lock(mutex_);
  return target_;
}

}  // namespace settle
