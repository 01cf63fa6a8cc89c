#include "settle/api/audit_json.h"

#include "settle/core/clock.h"

namespace settle::api {

using nlohmann::json;

json AuditEntryJson(const storage::AuditEntry& e) {
  // Stored by settled as a JSON object; anything else is shown as the text it is.
  json parameters = json::parse(e.parameters, nullptr, /*allow_exceptions=*/false);
  if (!parameters.is_object()) parameters = e.parameters;
  return {{"id", e.id},
          {"at", FormatTime(e.at)},
          {"actor", e.actor},
          {"action", e.action},
          {"gid", e.gid},
          {"target", e.target},
          {"parameters", std::move(parameters)},
          {"reason", e.reason}};
}

std::string AuditResponseBody(const storage::AuditPage& page) {
  json entries = json::array();
  for (const storage::AuditEntry& e : page.entries) entries.push_back(AuditEntryJson(e));
  const json body = {
      {"entries", std::move(entries)},
      {"next_position", page.next_position ? std::to_string(*page.next_position) : ""}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace settle::api
