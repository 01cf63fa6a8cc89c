#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "settle/storage/store.h"

namespace settle::api {

// A text settled stores as a JSON object (an audit entry's parameters, a bulk job's filter and
// parameters), as that object; anything else (malformed, or not an object) as the text it is.
nlohmann::json ObjectOrText(const std::string& text);

// An audit entry as the API shows it (docs/protocol.md §3.15): {"id","at","actor","action",
// "gid","target","parameters","reason"}; parameters as the JSON object it is, texts as valid
// UTF-8 whatever bytes they hold.
nlohmann::json AuditEntryJson(const storage::AuditEntry& entry);

// GET /api/admin/audit: {"entries":[...],"next_position":""}, newest first; next_position is
// the page's own ("" on the last).
std::string AuditResponseBody(const storage::AuditPage& page);

}  // namespace settle::api
