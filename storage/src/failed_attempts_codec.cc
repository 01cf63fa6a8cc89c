#include "failed_attempts_codec.h"

#include <nlohmann/json.hpp>

namespace settle::storage {

std::string EncodeFailedAttempts(const std::vector<FailedAttempt>& attempts) {
  if (attempts.empty()) return {};
  nlohmann::json array = nlohmann::json::array();
  for (const FailedAttempt& a : attempts) array.push_back({ToUnixMillis(a.at), a.error});
  return array.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::vector<FailedAttempt>> DecodeFailedAttempts(std::string_view text) {
  std::vector<FailedAttempt> attempts;
  if (text.empty()) return attempts;
  const nlohmann::json array = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!array.is_array()) return Status::Internal("failed_attempts is not a JSON array");
  for (const nlohmann::json& entry : array) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_number_integer() ||
        !entry[1].is_string()) {
      return Status::Internal("failed_attempts holds an entry that is not [millis, \"error\"]");
    }
    attempts.push_back(
        FailedAttempt{FromUnixMillis(entry[0].get<std::int64_t>()), entry[1].get<std::string>()});
  }
  return attempts;
}

}  // namespace settle::storage
