#pragma once

#include <string>
#include <string_view>

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/drive/bulk_request.h"

namespace settle::api {

// POST /api/admin/bulk (docs/operations.md, "Bulk actions"):
//   {"action": "retry_now" | "pause" | "resume" | "force_stop" | "redirect",
//    "filter": {...}, "all": bool, "dry_run": bool, "reason": "...",
//    "from": "...", "to": "..."}   (from and to: a redirect's hosts)
// The filter's members are /all's, with the same values (a boolean may be sent as one):
// status, trans_type, stuck, paused, gid_prefix, create_time_start, create_time_end (RFC 3339
// or Unix milliseconds), host, and older_than: a whole number of seconds, transactions created
// at least that long before `now` (it narrows create_time_end). The reason is required unless it
// is a dry run. Bad input: InvalidArgument
// naming the member ("filter.status: ..."); unknown members are refused.
struct BulkAsk {
  drive::BulkRequest request;
  bool dry_run = false;
};
Result<BulkAsk> ParseBulk(std::string_view body, TimePoint now);

// POST /api/admin/jobs/cancel and /resume: {"id": "...", "reason": "..."}, both required.
struct JobAsk {
  std::string id;
  std::string reason;
};
Result<JobAsk> ParseJobAsk(std::string_view body);

}  // namespace settle::api
