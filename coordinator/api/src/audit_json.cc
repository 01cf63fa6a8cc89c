#include "settle/api/audit_json.h"

#include "settle/core/clock.h"

namespace settle::api {

using nlohmann::json;

json ObjectOrText(const std::string& text) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return text;
  return parsed;
}

json AuditEntryJson(const storage::AuditEntry& e) {
  return {{"id", e.id},
          {"at", FormatTime(e.at)},
          {"actor", e.actor},
          {"action", e.action},
          {"gid", e.gid},
          {"target", e.target},
          {"parameters", ObjectOrText(e.parameters)},
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
