#include "settle/api/job_json.h"

#include "settle/api/audit_json.h"
#include "settle/core/clock.h"
#include "settle/core/protocol.h"

namespace settle::api {

using nlohmann::json;

namespace {

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

json JobJson(const storage::BulkJob& job, bool running_here) {
  return {{"id", job.id},
          {"state", ToString(job.state)},
          {"action", job.action},
          {"actor", job.actor},
          {"reason", job.reason},
          {"filter", ObjectOrText(job.filter)},
          {"parameters", ObjectOrText(job.parameters)},
          {"created_at", FormatTime(job.created_at)},
          {"updated_at", FormatTime(job.updated_at)},
          {"matched", job.matched},
          {"acted", job.acted},
          {"skipped", job.skipped},
          {"last_skip", job.last_skip},
          {"running_here", running_here}};
}

std::string JobResponseBody(const storage::BulkJob& job, bool running_here) {
  return Dump(json{{"job", JobJson(job, running_here)}});
}

std::string JobsResponseBody(const std::vector<storage::BulkJob>& jobs,
                             const drive::BulkJobs& runs) {
  json list = json::array();
  for (const storage::BulkJob& job : jobs) list.push_back(JobJson(job, runs.Running(job.id)));
  return Dump(json{{"jobs", std::move(list)}});
}

std::string BulkPlanResponseBody(const drive::BulkRequest& request, const drive::BulkPlan& plan) {
  json sample = json::array();
  for (const storage::GlobalRecord& g : plan.sample) {
    sample.push_back({{"gid", g.gid},
                      {"trans_type", ToString(g.trans_type)},
                      {"status", ToString(g.status)},
                      {"create_time", FormatTime(g.create_time)},
                      {"stuck", g.stuck},
                      {"paused", g.paused.has_value() && !IsTerminal(g.status)}});
  }
  return Dump(json{{"dry_run", true},
                   {"action", drive::ToString(request.action)},
                   {"matched", plan.matched},
                   {"complete", plan.complete},
                   {"sample", std::move(sample)}});
}

}  // namespace settle::api
