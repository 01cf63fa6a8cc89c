#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/clock.h"

namespace settle::drive {

// Logs the unknown request members the coordinator ignored (engine/request_fields.h), each at
// most once a minute whatever the traffic: a client that sends "wait_resutl" with every request
// gets one warning a minute, not one a request. Hostile clients cannot grow it without bound:
// it remembers at most kMaxRemembered members; when it is full, members last logged over a
// minute ago are forgotten, and a new member that finds no room is counted instead of logged
// (the count is logged with the next member that is).
//
// Lifetime: `clock` must outlive it. Thread-safety: Note from any thread.
class IgnoredFieldsLog {
 public:
  static constexpr std::size_t kMaxRemembered = 1024;
  static constexpr Duration kEvery = std::chrono::minutes(1);

  explicit IgnoredFieldsLog(const Clock& clock) : clock_(clock) {}

  // `fields` of one `operation` ("submit") were ignored. Returns the members it logged now
  // (for tests).
  std::vector<std::string> Note(std::string_view operation, const std::vector<std::string>& fields);

 private:
  // Whether `field` may be logged now; remembers that it was. Called under mu_.
  bool Due(const std::string& field, TimePoint now);

  const Clock& clock_;
  std::mutex mu_;
  std::map<std::string, TimePoint> last_logged_;
  std::size_t unlogged_ = 0;  // members that found no room since the last log line
};

}  // namespace settle::drive
