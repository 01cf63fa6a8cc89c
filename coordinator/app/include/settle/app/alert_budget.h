#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "settle/core/clock.h"

namespace settle::app {

// How many alerts about one creator's transactions (stuck, parked, gave up) the webhook gets:
// at most `per_window` in each `window`, so that a client whose transactions all fail (or who
// sets pause_after to 1 on each) cannot fill the alert queue and crowd out everyone else's
// alerts and the operators' actions. The alerts beyond are counted, and the next one sent says
// how many were held back.
//
// Not thread-safe: its owner serializes the calls.
class AlertBudget {
 public:
  // `per_window` 0: no limit.
  AlertBudget(std::size_t per_window, Duration window) : per_window_(per_window), window_(window) {}

  // Whether an alert about a transaction of `creator` may be sent at `now`. When it may,
  // `held_back` is how many of that creator's alerts were not sent since its last one.
  bool Admit(const std::string& creator, TimePoint now, std::size_t& held_back);

 private:
  struct Window {
    TimePoint start;
    std::size_t sent = 0;
    std::size_t held_back = 0;
  };
  std::size_t per_window_;
  Duration window_;
  std::map<std::string, Window> creators_;
};

}  // namespace settle::app
