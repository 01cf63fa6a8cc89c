#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "settle/drive/bulk_jobs.h"
#include "settle/storage/records.h"

namespace settle::api {

// A bulk job as the admin API shows it (docs/protocol.md §3.14): id, state, action, actor,
// reason, filter and parameters (objects), created_at, updated_at, matched, acted, skipped,
// last_skip, and running_here (a run of it is going on this instance).
nlohmann::json JobJson(const storage::BulkJob& job, bool running_here);
// {"job": ...} and {"jobs": [...]}.
std::string JobResponseBody(const storage::BulkJob& job, bool running_here);
std::string JobsResponseBody(const std::vector<storage::BulkJob>& jobs,
                             const drive::BulkJobs& runs);
// A dry run: {"dry_run": true, "action", "matched", "complete", "sample": [{gid, trans_type,
// status, create_time, stuck, paused}]}.
std::string BulkPlanResponseBody(const drive::BulkRequest& request, const drive::BulkPlan& plan);

}  // namespace settle::api
