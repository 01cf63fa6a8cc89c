#include "settle/drive/ignored_fields_log.h"

#include <spdlog/spdlog.h>

namespace settle::drive {

bool IgnoredFieldsLog::Due(const std::string& field, TimePoint now) {
  auto it = last_logged_.find(field);
  if (it != last_logged_.end()) {
    if (now - it->second < kEvery) return false;
    it->second = now;
    return true;
  }
  if (last_logged_.size() >= kMaxRemembered) {
    std::erase_if(last_logged_, [now](const auto& entry) { return now - entry.second >= kEvery; });
  }
  if (last_logged_.size() >= kMaxRemembered) {
    ++unlogged_;
    return false;
  }
  last_logged_.emplace(field, now);
  return true;
}

std::vector<std::string> IgnoredFieldsLog::Note(std::string_view operation,
                                                const std::vector<std::string>& fields) {
  std::vector<std::string> logged;
  std::size_t unlogged = 0;
  {
    const TimePoint now = clock_.Now();
    std::lock_guard lock(mu_);
    for (const std::string& field : fields) {
      if (Due(field, now)) logged.push_back(field);
    }
    if (!logged.empty()) unlogged = std::exchange(unlogged_, 0);
  }
  for (const std::string& field : logged) {
    spdlog::warn(
        "{}: ignored the member {}, which settle does not know (misspelled? --strict-requests "
        "refuses such requests); logged once a minute{}",
        operation, field,
        unlogged == 0 ? "" : fmt::format("; {} other unknown members were not logged", unlogged));
    unlogged = 0;
  }
  return logged;
}

}  // namespace settle::drive
