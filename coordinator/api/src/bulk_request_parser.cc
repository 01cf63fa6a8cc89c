#include "settle/api/bulk_request_parser.h"

#include <algorithm>
#include <array>

#include "json_fields.h"
#include "settle/api/request_parser.h"
#include "settle/engine/request_rules.h"

namespace settle::api {
namespace {

// The filter members a bulk action takes: /all's search, without its paging.
constexpr std::array<std::string_view, 9> kFilterMembers = {
    "status", "trans_type",        "stuck",           "paused",    "gid_prefix",
    "host",   "create_time_start", "create_time_end", "older_than"};

Status InFilter(const Status& s) {
  return Status::InvalidArgument("filter." + std::string(s.message()));
}

// The filter object as /all's query parameters, then read by /all's own parser.
Result<storage::ListQuery> ReadFilter(const nlohmann::json* filter, TimePoint now) {
  if (filter == nullptr) return storage::ListQuery{};
  if (!filter->is_object()) return Status::InvalidArgument("filter: expected a JSON object");
  QueryParams params;
  std::optional<std::int64_t> older_than;
  for (const auto& [key, value] : filter->items()) {
    if (std::find(kFilterMembers.begin(), kFilterMembers.end(), key) == kFilterMembers.end()) {
      return Status::InvalidArgument("filter." + key +
                                     ": unknown member; expected only status, trans_type, stuck, "
                                     "paused, gid_prefix, host, create_time_start, "
                                     "create_time_end and older_than");
    }
    if (value.is_null()) continue;
    if (key == "older_than") {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() > 100ULL * 365 * 24 * 3600) {
        return Status::InvalidArgument(
            "filter.older_than: expected a whole number of seconds from 0 to 100 years");
      }
      older_than = value.get<std::int64_t>();
    } else if (value.is_string()) {
      params.emplace(key, value.get<std::string>());
    } else if (value.is_boolean()) {
      params.emplace(key, value.get<bool>() ? "true" : "false");
    } else if (value.is_number_integer()) {
      params.emplace(key, std::to_string(value.get<std::int64_t>()));
    } else {
      return Status::InvalidArgument("filter." + key + ": expected a string");
    }
  }
  Result<storage::ListQuery> query = ParseListQuery(params);
  if (!query) return InFilter(query.status());
  if (older_than) {
    const TimePoint end = now - std::chrono::seconds(*older_than);
    if (!query->create_time_end || *query->create_time_end > end) query->create_time_end = end;
    if (query->create_time_start && *query->create_time_end < *query->create_time_start) {
      return Status::InvalidArgument("filter.older_than: leaves nothing after create_time_start");
    }
  }
  return query;
}

}  // namespace

Result<BulkAsk> ParseBulk(std::string_view body, TimePoint now) {
  auto parsed = ParseJsonObject(body, kMaxJsonDepth);
  if (!parsed) return parsed.status();
  const JsonFields fields(*parsed);
  BulkAsk ask;
  std::string action;
  if (Status s = fields.RequireString("action", action); !s.ok()) return s;
  const std::optional<drive::BulkAction> parsed_action = drive::ParseBulkAction(action);
  if (!parsed_action) {
    return Status::InvalidArgument(
        "action: expected retry_now, pause, resume, force_stop or redirect");
  }
  drive::BulkRequest& r = ask.request;
  r.action = *parsed_action;
  Result<storage::ListQuery> filter = ReadFilter(fields.Member("filter"), now);
  if (!filter) return filter.status();
  r.filter = std::move(filter).value();
  std::optional<bool> all;
  std::optional<bool> dry_run;
  std::optional<std::string> reason;
  std::optional<std::string> from;
  std::optional<std::string> to;
  if (Status s = fields.ReadBool("all", all); !s.ok()) return s;
  if (Status s = fields.ReadBool("dry_run", dry_run); !s.ok()) return s;
  if (Status s = fields.ReadString("reason", reason); !s.ok()) return s;
  if (Status s = fields.ReadString("from", from); !s.ok()) return s;
  if (Status s = fields.ReadString("to", to); !s.ok()) return s;
  if (const std::vector<std::string> unread = fields.Unread(); !unread.empty()) {
    return Status::InvalidArgument(unread.front() +
                                   ": unknown member; expected only action, filter, all, "
                                   "dry_run, reason, from and to");
  }
  r.all = all.value_or(false);
  ask.dry_run = dry_run.value_or(false);
  r.reason = reason.value_or("");
  r.from = from.value_or("");
  r.to = to.value_or("");
  if (r.reason.empty() && !ask.dry_run) {
    return Status::InvalidArgument("reason: required (why, for the audit trail)");
  }
  if (Status s = engine::CheckReason("reason", r.reason); !s.ok()) return s;
  if (Status s = drive::CheckBulkRequest(r); !s.ok()) return s;
  return ask;
}

Result<JobAsk> ParseJobAsk(std::string_view body) {
  auto parsed = ParseJsonObject(body, kMaxJsonDepth);
  if (!parsed) return parsed.status();
  const JsonFields fields(*parsed);
  JobAsk ask;
  if (Status s = fields.RequireString("id", ask.id); !s.ok()) return s;
  if (Status s = fields.RequireString("reason", ask.reason); !s.ok()) return s;
  if (Status s = engine::CheckReason("reason", ask.reason); !s.ok()) return s;
  if (const std::vector<std::string> unread = fields.Unread(); !unread.empty()) {
    return Status::InvalidArgument(unread.front() +
                                   ": unknown member; expected only id and reason");
  }
  if (ask.id.size() > 64) return Status::InvalidArgument("id: not a job's id");
  return ask;
}

}  // namespace settle::api
