#include "settle/sdk/msg.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "global_call_json.h"
#include "settle/core/grpc_target.h"
#include "settle/core/protocol.h"
#include "settle/core/url.h"
#include "settle/sdk/check_gid.h"
#include "submit_outcome.h"

namespace settle::sdk {
namespace {

using nlohmann::json;

constexpr std::string_view kTopicScheme = "topic://";

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// A URL the coordinator calls: http(s)://, or a gRPC method (docs/protocol.md §10.4).
Status CheckUrl(const std::string& field, const std::string& url) {
  if (url.empty()) return Status::InvalidArgument(field + ": required");
  if (LooksLikeGrpcTarget(url)) {
    Result<GrpcTarget> target = ParseGrpcTarget(url);
    return target ? Status::Ok()
                  : Status::InvalidArgument(field + ": " + target.status().message());
  }
  Result<Url> parsed = ParseUrl(url);
  if (!parsed) return Status::InvalidArgument(field + ": " + parsed.status().message());
  return Status::Ok();
}

// A step's action: a URL, or topic://NAME with a name that can travel in a URL.
Status CheckAction(const std::string& field, const std::string& action) {
  if (!action.starts_with(kTopicScheme)) return CheckUrl(field, action);
  const std::string_view topic = std::string_view(action).substr(kTopicScheme.size());
  const bool printable = std::all_of(topic.begin(), topic.end(), [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && c != 0x7f;
  });
  if (topic.empty() || !printable) {
    return Status::InvalidArgument(field +
                                   ": a topic name must be non-empty, without whitespace or "
                                   "control characters");
  }
  return Status::Ok();
}

}  // namespace

Msg& Msg::Add(std::string action_url, std::string payload) {
  steps_.push_back(Step{std::move(action_url), std::move(payload)});
  return *this;
}

Msg& Msg::AddTopic(const std::string& topic, std::string payload) {
  return Add(std::string(kTopicScheme) + topic, std::move(payload));
}

Msg& Msg::EnableConcurrent() {
  concurrent_ = true;
  return *this;
}

Msg& Msg::SetDelay(std::chrono::seconds delay) {
  delay_ = delay;
  return *this;
}

Msg& Msg::SetOptions(TransOptions options) {
  options_ = std::move(options);
  return *this;
}

GlobalCall Msg::ToCall() const {
  GlobalCall call{.gid = gid_,
                  .trans_type = "msg",
                  .options = options_,
                  .concurrent = concurrent_,
                  .query_prepared = query_prepared_};
  for (const Step& step : steps_) {
    call.steps.push_back({{"action", step.action}});
    call.payloads.push_back(step.payload);
  }
  // As DTM's Go SDK sends it: a JSON string.
  if (delay_) call.custom_data = Dump(json{{"delay", delay_->count()}});
  return call;
}

std::string Msg::ToJson() const { return GlobalCallJson(ToCall()); }

Status Msg::CheckMessage() const {
  if (Status s = CheckGid(gid_); !s.ok()) return s;
  if (steps_.empty()) return Status::InvalidArgument("steps: a message needs at least one step");
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    Status s = CheckAction("steps[" + std::to_string(i) + "].action", steps_[i].action);
    if (!s.ok()) return s;
  }
  if (delay_ && delay_->count() < 0) return Status::InvalidArgument("delay: must not be negative");
  return Status::Ok();
}

Status Msg::Prepare(const std::string& query_prepared_url) {
  if (Status s = CheckMessage(); !s.ok()) return s;
  if (Status s = CheckUrl("query_prepared", query_prepared_url); !s.ok()) return s;
  query_prepared_ = query_prepared_url;
  Result<std::string> answer = link_.Send(GlobalOp::kPrepare, ToCall());
  return answer ? Status::Ok() : answer.status();
}

Result<Outcome> Msg::Submit() {
  if (Status s = CheckMessage(); !s.ok()) return s;
  return SubmitOutcome(gid_, options_.wait_result, link_.Send(GlobalOp::kSubmit, ToCall()));
}

Result<Outcome> Msg::Abort() {
  if (Status s = CheckGid(gid_); !s.ok()) return s;
  // The gid and trans_type alone in the body; the caller's trace context as headers.
  GlobalCall call{.gid = gid_, .trans_type = "msg"};
  call.options.traceparent = options_.traceparent;
  call.options.tracestate = options_.tracestate;
  Result<std::string> answer = link_.Send(GlobalOp::kAbort, call);
  if (!answer) return answer.status();
  return Outcome{gid_, GlobalStatus::kFailed, ""};
}

Result<Outcome> Msg::DoAndSubmit(const std::string& query_prepared_url, Barrier& barrier,
                                 const MsgLocalTransaction& local_tx) {
  if (Status s = Prepare(query_prepared_url); !s.ok()) return s;
  const Status local = RunMsgLocalTransaction(barrier, gid_, local_tx);
  if (local.ok()) return Submit();

  // A Submit or Abort that does not reach the coordinator is not retried here: the message
  // stays prepared, and the coordinator's back-check finds the same verdict.
  bool committed = false;
  if (local.code() != StatusCode::kConflict) {
    const BranchReply verdict = QueryPrepared(barrier, gid_);
    // The database cannot say now: the coordinator's back-check asks again later.
    if (!verdict.status.ok() && verdict.status.code() != StatusCode::kConflict) return local;
    committed = verdict.status.ok();
  }
  if (committed) {
    Submit().status().IgnoreError();
  } else {
    Abort().status().IgnoreError();
  }
  return local;
}

}  // namespace settle::sdk
