// Bulk actions and their jobs (docs/operations.md, "Bulk actions"): POST /api/admin/bulk (a
// dry run's plan, or a job started), GET /api/admin/jobs, and a job's cancel and resume. They
// answer 503 while this server runs no jobs (ApiServer::SetBulkJobs).
#include "api_server_impl.h"
#include "settle/api/bulk_request_parser.h"
#include "settle/api/job_json.h"

namespace settle::api {

void ApiServer::Impl::RegisterBulkRoutes() {
  // 404 for an unknown job, 409 for one whose state forbids it, each {"message"}; 503 while
  // this server runs no jobs.
  const auto job_answer = [](const Status& s) -> HttpAnswer {
    if (s.code() == StatusCode::kNotFound) return HttpAnswer{404, MessageBody(s.message())};
    if (s.code() == StatusCode::kConflict) return HttpAnswer{409, MessageBody(s.message())};
    return ToHttpAnswer(s);
  };
  const Status no_jobs = Status::Unavailable("bulk jobs are not run by this server");
  AddRoute("POST", "/api/admin/bulk", Access::kAdmin,
           CallerRouteHandler([this, job_answer, no_jobs](net::Request& req, const Caller& caller)
                                  -> asio::awaitable<HttpAnswer> {
             if (bulk == nullptr) co_return ToHttpAnswer(no_jobs);
             Result<BulkAsk> asked = ParseBulk(req.body, clock.Now());
             if (!asked) co_return ToHttpAnswer(asked.status());
             asked->request.actor = caller.name;
             if (asked->dry_run) {
               auto plan = co_await bulk->DryRun(asked->request);
               if (!plan) co_return job_answer(plan.status());
               co_return JsonAnswer(BulkPlanResponseBody(asked->request, *plan));
             }
             auto job = co_await bulk->Start(std::move(asked->request));
             if (!job) co_return job_answer(job.status());
             co_return HttpAnswer{202, JobResponseBody(*job, bulk->Running(job->id))};
           }));
  // Jobs are operators' actions, shown as the audit trail is: not to a client token.
  AddRoute("GET", "/api/admin/jobs", Access::kRead,
           CallerRouteHandler([this, job_answer, no_jobs](net::Request& req, const Caller& caller)
                                  -> asio::awaitable<HttpAnswer> {
             if (bulk == nullptr) co_return ToHttpAnswer(no_jobs);
             if (!ShowsAudit(caller)) {
               co_return HttpAnswer{403, MessageBody("bulk jobs are shown to operators (read and "
                                                     "admin tokens), not to a client token")};
             }
             if (auto id = req.params.find("id"); id != req.params.end()) {
               auto job = co_await bulk->Get(id->second);
               if (!job) co_return job_answer(job.status());
               if (!job->has_value()) {
                 co_return HttpAnswer{404, MessageBody("job " + id->second + " not found")};
               }
               co_return JsonAnswer(JobResponseBody(**job, bulk->Running(id->second)));
             }
             auto jobs = co_await bulk->List(50);
             if (!jobs) co_return job_answer(jobs.status());
             co_return JsonAnswer(JobsResponseBody(*jobs, *bulk));
           }));
  for (const bool cancel : {true, false}) {
    AddRoute("POST", cancel ? "/api/admin/jobs/cancel" : "/api/admin/jobs/resume", Access::kAdmin,
             CallerRouteHandler(
                 [this, job_answer, no_jobs, cancel](
                     net::Request& req, const Caller& caller) -> asio::awaitable<HttpAnswer> {
                   if (bulk == nullptr) co_return ToHttpAnswer(no_jobs);
                   Result<JobAsk> asked = ParseJobAsk(req.body);
                   if (!asked) co_return ToHttpAnswer(asked.status());
                   if (cancel) {
                     const Status s = co_await bulk->Cancel(asked->id, caller.name, asked->reason);
                     if (!s.ok()) co_return job_answer(s);
                   } else {
                     auto resumed = co_await bulk->Resume(asked->id, caller.name, asked->reason);
                     if (!resumed) co_return job_answer(resumed.status());
                   }
                   auto job = co_await bulk->Get(asked->id);
                   if (!job) co_return job_answer(job.status());
                   if (!job->has_value()) co_return job_answer(Status::NotFound("job gone"));
                   co_return JsonAnswer(JobResponseBody(**job, bulk->Running(asked->id)));
                 }));
  }
}

}  // namespace settle::api
