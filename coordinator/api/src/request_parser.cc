// The parsers of the API's JSON bodies: the transactions' requests, the operators' and the
// topics'. Query strings are read in query_parser.cc.
#include "settle/api/request_parser.h"

#include <array>
#include <charconv>
#include <functional>

#include "json_fields.h"
#include "settle/core/base64.h"
#include "settle/engine/request_rules.h"
#include "settle/engine/type_rules.h"

namespace settle::api {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxSeconds = 10LL * 365 * 24 * 3600;  // ten years
constexpr std::int64_t kMaxRetryLimit = 1'000'000'000;

// The gid's presence and type; its value is the engine's rule (CheckGid), which the coordinator
// checks (the query string's gid, which reaches no check of the coordinator's, is checked here).
Status ReadGid(const JsonFields& fields, std::string& gid) {
  return fields.RequireString("gid", gid);
}

Status ReadTransType(const JsonFields& fields, TransType& out) {
  std::string name;
  if (Status s = fields.RequireString("trans_type", name); !s.ok()) return s;
  if (auto t = ParseTransType(name)) {
    out = *t;
    return Status::Ok();
  }
  return Status::InvalidArgument(
      "trans_type: unknown trans_type; expected tcc, saga, msg, xa or workflow");
}

// A string member that may be absent (read as empty): the engine checks what it must hold.
Status ReadText(const JsonFields& fields, const char* name, std::string& out) {
  std::optional<std::string> text;
  if (Status s = fields.ReadString(name, text); !s.ok()) return s;
  out = text.value_or("");
  return Status::Ok();
}

Status ReadDuration(const JsonFields& fields, const char* name, std::optional<Duration>& out) {
  std::optional<std::int64_t> seconds;
  if (Status s = fields.ReadCount(name, kMaxSeconds, seconds, "seconds"); !s.ok()) return s;
  if (seconds && *seconds > 0) out = std::chrono::seconds(*seconds);
  return Status::Ok();
}

// custom_data's "pause_after" (any type): consecutive failures of one branch after which the
// transaction is paused for an operator (0: never), overriding the server's --pause-after.
constexpr std::int64_t kMaxPauseAfter = 1'000'000;
Status ReadPauseAfter(const JsonFields& fields, engine::RequestOptions& options) {
  std::optional<std::int64_t> limit;
  if (Status s = fields.ReadCount("pause_after", kMaxPauseAfter, limit, "failures"); !s.ok()) {
    return s;
  }
  if (limit) options.pause_after = static_cast<int>(*limit);
  return Status::Ok();
}

// A workflow's custom_data: {"name": its name, "data": its input, in base64 as Go encodes bytes
// (null or absent: none)}. The name's rules are the engine's.
Status ReadWorkflowNameAndInput(const JsonFields& fields, engine::RequestOptions& options) {
  std::optional<std::string> name;
  if (Status s = fields.ReadString("name", name); !s.ok()) return s;
  options.workflow_name = name.value_or("");
  std::optional<std::string> input;
  if (Status s = fields.ReadString("data", input); !s.ok()) return s;
  std::optional<std::string> bytes = Base64Decode(input.value_or(""));
  if (!bytes) {
    return Status::InvalidArgument("custom_data.data: must be base64 (the workflow's input)");
  }
  options.workflow_input = std::move(*bytes);
  return Status::Ok();
}

// custom_data, as the type reads it (TypeRules::custom_data): any text for a TCC or XA (DTM
// gives it no meaning there: it is kept as it is), a JSON object for a saga or a message; an
// object may carry "pause_after", a saga's {"concurrent":true,"orders":{"1":[0]}}, a message's
// {"delay": seconds} (how long after its creation the first delivery may go out).
Status ReadCustomDataOf(const engine::TypeRules& rules, engine::RequestOptions& options) {
  const std::string& custom_data = options.custom_data;
  if (custom_data.empty()) return Status::Ok();
  auto parsed = ParseJsonObject(custom_data, kMaxJsonDepth);
  if (!parsed) {
    if (!rules.custom_data.object_required) return Status::Ok();
    return Status::InvalidArgument("custom_data: must be a JSON object encoded as a string");
  }
  JsonFields fields(*parsed, "custom_data.");
  if (Status s = ReadPauseAfter(fields, options); !s.ok()) return s;
  if (rules.custom_data.workflow) return ReadWorkflowNameAndInput(fields, options);
  if (rules.custom_data.delay) {
    if (Status s = ReadDuration(fields, "delay", options.delay); !s.ok()) return s;
  }
  if (!rules.custom_data.concurrent_and_orders) return Status::Ok();
  std::optional<bool> concurrent;
  if (Status s = fields.ReadBool("concurrent", concurrent); !s.ok()) return s;
  if (concurrent) options.concurrent = options.concurrent || *concurrent;
  const json* orders = fields.Member("orders");
  if (orders == nullptr) return Status::Ok();
  if (!orders->is_object()) return Status::InvalidArgument("custom_data.orders: must be an object");
  for (const auto& [key, waits] : orders->items()) {
    const std::string path = "custom_data.orders." + key;
    int step = -1;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), step);
    if (ec != std::errc() || end != key.data() + key.size() || step < 0) {
      return Status::InvalidArgument(path + ": the key must be a step index");
    }
    if (!waits.is_array()) return Status::InvalidArgument(path + ": must be an array");
    std::vector<int>& list = options.orders[step];
    for (const json& w : waits) {
      if (!w.is_number_integer() || w.get<std::int64_t>() < 0 ||
          w.get<std::int64_t>() > static_cast<std::int64_t>(engine::kMaxSagaSteps)) {
        return Status::InvalidArgument(path + ": must hold step indexes");
      }
      list.push_back(static_cast<int>(w.get<std::int64_t>()));
    }
  }
  return Status::Ok();
}

Status ReadOptions(const JsonFields& fields, engine::RequestOptions& options) {
  std::optional<bool> flag;
  if (Status s = fields.ReadBool("wait_result", flag); !s.ok()) return s;
  options.wait_result = flag.value_or(false);
  flag.reset();
  if (Status s = fields.ReadBool("concurrent", flag); !s.ok()) return s;
  options.concurrent = flag.value_or(false);
  if (Status s = ReadDuration(fields, "timeout_to_fail", options.timeout_to_fail); !s.ok())
    return s;
  if (Status s = ReadDuration(fields, "request_timeout", options.request_timeout); !s.ok())
    return s;
  if (Status s = ReadDuration(fields, "retry_interval", options.retry_interval); !s.ok()) return s;
  std::optional<std::int64_t> retry_limit;
  if (Status s = fields.ReadCount("retry_limit", kMaxRetryLimit, retry_limit); !s.ok()) return s;
  options.retry_limit = static_cast<int>(retry_limit.value_or(0));
  std::optional<std::map<std::string, std::string>> headers;
  if (Status s = fields.ReadStringMap("branch_headers", headers); !s.ok()) return s;
  if (headers) options.branch_headers = std::move(*headers);
  std::optional<std::string> custom_data;
  if (Status s = fields.ReadString("custom_data", custom_data); !s.ok()) return s;
  options.custom_data = custom_data.value_or("");
  return Status::Ok();
}

// A saga's or a message's steps: objects with string members; the members nothing read go to
// `unread`.
Status ReadStepObjects(const json& list, std::vector<engine::RequestStep>& steps,
                       engine::UnreadFields& unread) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string prefix = "steps[" + std::to_string(i) + "]";
    const json& item = list[i];
    if (!item.is_object()) return Status::InvalidArgument(prefix + ": must be an object");
    JsonFields step_fields(item, prefix + ".");
    engine::RequestStep step;
    if (Status s = ReadText(step_fields, "action", step.action_url); !s.ok()) return s;
    if (Status s = ReadText(step_fields, "compensate", step.compensate_url); !s.ok()) return s;
    for (std::string& path : step_fields.Unread()) unread.push_back(std::move(path));
    steps.push_back(std::move(step));
  }
  return Status::Ok();
}

// A saga's or a message's steps and their payloads, as JSON carries them: two arrays of the same
// length, objects with string members and strings (their sizes bounded by the body's). Their
// values and counts are the engine's to check.
Status ReadSteps(const JsonFields& fields, std::string_view kind,
                 std::vector<engine::RequestStep>& steps, std::vector<std::string>& payloads,
                 engine::UnreadFields& unread) {
  const json* list = fields.Member("steps");
  if (list == nullptr) {
    return Status::InvalidArgument("steps: required for " + std::string(kind));
  }
  if (!list->is_array()) return Status::InvalidArgument("steps: must be an array");
  const json* bodies = fields.Member("payloads");
  if (bodies == nullptr) return Status::InvalidArgument("payloads: required, one per step");
  if (!bodies->is_array()) return Status::InvalidArgument("payloads: must be an array");
  if (Status s = ReadStepObjects(*list, steps, unread); !s.ok()) return s;
  for (std::size_t i = 0; i < bodies->size(); ++i) {
    const json& payload = (*bodies)[i];
    if (!payload.is_string()) {
      return Status::InvalidArgument("payloads[" + std::to_string(i) +
                                     "]: must be a string (the JSON-encoded body)");
    }
    payloads.push_back(payload.get<std::string>());
  }
  return Status::Ok();
}

// What a prepare or a submit carries for its type: custom_data, and steps, payloads and
// query_prepared where the type has them.
template <typename Request>
Status ReadContent(const JsonFields& fields, const engine::TypeRules& rules, Request& r) {
  if (Status s = ReadCustomDataOf(rules, r.options); !s.ok()) return s;
  if (!rules.carries_steps) {
    if (!rules.carries_query_prepared) return Status::Ok();
    return ReadText(fields, "query_prepared", r.query_prepared);
  }
  if (Status s = ReadSteps(fields, rules.article_name, r.steps, r.payloads, r.unread_fields);
      !s.ok()) {
    return s;
  }
  if (!rules.carries_query_prepared) return Status::Ok();
  return ReadText(fields, "query_prepared", r.query_prepared);
}

template <typename T>
using Reader = std::function<Status(const JsonFields&, T&)>;

// Reads the body into a T, then lists in its unread_fields the members nothing read: the
// body's own first, then those its reader listed (a step's).
template <typename T>
Result<T> ParseBody(std::string_view body, const Reader<T>& read) {
  auto parsed = ParseJsonObject(body, kMaxJsonDepth);
  if (!parsed) return parsed.status();
  T request;
  const JsonFields fields(*parsed);
  if (Status s = read(fields, request); !s.ok()) return s;
  engine::UnreadFields unread = fields.Unread();
  unread.insert(unread.end(), request.unread_fields.begin(), request.unread_fields.end());
  request.unread_fields = std::move(unread);
  return request;
}

// A prepare's body, or prepareWorkflow's: gid, type, options, and what the type carries when
// it `takes` the request (a type that does not is refused by the engine, naming trans_type).
Result<engine::PrepareRequest> ParsePrepareFor(std::string_view body,
                                               bool (*takes)(const engine::TypeRules&)) {
  return ParseBody<engine::PrepareRequest>(
      body, [takes](const JsonFields& f, engine::PrepareRequest& r) {
        if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
        if (Status s = ReadTransType(f, r.trans_type); !s.ok()) return s;
        if (Status s = ReadOptions(f, r.options); !s.ok()) return s;
        const engine::TypeRules& rules = engine::RulesOf(r.trans_type);
        if (!takes(rules)) return Status::Ok();
        return ReadContent(f, rules, r);
      });
}

}  // namespace

Result<engine::PrepareRequest> ParsePrepare(std::string_view body) {
  return ParsePrepareFor(body, [](const engine::TypeRules& r) { return r.takes_prepare; });
}

Result<engine::PrepareRequest> ParsePrepareWorkflow(std::string_view body) {
  return ParsePrepareFor(body, [](const engine::TypeRules& r) { return r.takes_prepare_workflow; });
}

Result<engine::RegisterBranchRequest> ParseRegisterBranch(std::string_view body) {
  return ParseBody<engine::RegisterBranchRequest>(
      body, [](const JsonFields& f, engine::RegisterBranchRequest& r) {
        if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
        if (Status s = ReadTransType(f, r.trans_type); !s.ok()) return s;
        if (Status s = f.RequireString("branch_id", r.branch_id); !s.ok()) return s;
        if (Status s = ReadText(f, "data", r.data); !s.ok()) return s;
        // XA's one phase-2 url, TCC's confirm and cancel, a workflow step's op and status: the
        // other types' are ignored.
        const engine::BranchUrls names = engine::RulesOf(r.trans_type).branch_urls;
        if (names == engine::BranchUrls::kOneUrl) return ReadText(f, "url", r.url);
        if (names == engine::BranchUrls::kStepOutcome) {
          if (Status s = ReadText(f, "op", r.op); !s.ok()) return s;
          return ReadText(f, "status", r.status);
        }
        if (Status s = ReadText(f, "confirm", r.confirm_url); !s.ok()) return s;
        if (Status s = ReadText(f, "try", r.try_url); !s.ok()) return s;
        return ReadText(f, "cancel", r.cancel_url);
      });
}

Result<engine::SubmitRequest> ParseSubmit(std::string_view body) {
  return ParseBody<engine::SubmitRequest>(body, [](const JsonFields& f, engine::SubmitRequest& r) {
    if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
    if (Status s = ReadTransType(f, r.trans_type); !s.ok()) return s;
    if (Status s = ReadOptions(f, r.options); !s.ok()) return s;
    // A TCC's or XA's submit carries no content: its branches come from registerBranch. A
    // workflow's carries how it ended.
    const engine::TypeRules& rules = engine::RulesOf(r.trans_type);
    if (rules.submit.records_outcome) {
      std::optional<std::map<std::string, std::string>> extra;
      if (Status s = f.ReadStringMap("req_extra", extra); !s.ok()) return s;
      r.req_extra = extra.value_or(std::map<std::string, std::string>{});
      return Status::Ok();
    }
    if (!rules.submit.carries_content) return Status::Ok();
    return ReadContent(f, rules, r);
  });
}

Result<engine::AbortRequest> ParseAbort(std::string_view body) {
  return ParseBody<engine::AbortRequest>(body, [](const JsonFields& f, engine::AbortRequest& r) {
    if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
    if (Status s = ReadTransType(f, r.trans_type); !s.ok()) return s;
    if (Status s = ReadText(f, "rollback_reason", r.rollback_reason); !s.ok()) return s;
    std::optional<bool> wait;
    if (Status s = f.ReadBool("wait_result", wait); !s.ok()) return s;
    r.wait_result = wait.value_or(false);
    return Status::Ok();
  });
}

Result<engine::RetryNowRequest> ParseRetryNow(std::string_view body) {
  return ParseBody<engine::RetryNowRequest>(body,
                                            [](const JsonFields& f, engine::RetryNowRequest& r) {
                                              if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
                                              return ReadText(f, "reason", r.reason);
                                            });
}

Result<RetryHostRequest> ParseRetryHost(std::string_view body) {
  auto parsed = ParseJsonObject(body, kMaxJsonDepth);
  if (!parsed) return parsed.status();
  const JsonFields fields(*parsed);
  RetryHostRequest r;
  if (Status s = fields.RequireString("host", r.host); !s.ok()) return s;
  if (Status s = ReadText(fields, "reason", r.reason); !s.ok()) return s;
  if (const std::vector<std::string> unread = fields.Unread(); !unread.empty()) {
    return Status::InvalidArgument(unread.front() +
                                   ": unknown member; expected only host and reason");
  }
  return r;
}

Result<engine::ForceStopRequest> ParseForceStop(std::string_view body) {
  return ParseBody<engine::ForceStopRequest>(body,
                                             [](const JsonFields& f, engine::ForceStopRequest& r) {
                                               if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
                                               return ReadText(f, "reason", r.reason);
                                             });
}

namespace {

// A JSON object of the named string members, each required, and nothing else.
Status ReadExactStrings(std::string_view body,
                        const std::vector<std::pair<const char*, std::string*>>& members) {
  auto parsed = ParseJsonObject(body, kMaxJsonDepth);
  if (!parsed) return parsed.status();
  const JsonFields fields(*parsed);
  std::string names;
  for (const auto& [name, out] : members) {
    if (Status s = fields.RequireString(name, *out); !s.ok()) return s;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  if (const std::vector<std::string> unread = fields.Unread(); !unread.empty()) {
    return Status::InvalidArgument(unread.front() + ": unknown member; expected only " + names);
  }
  return Status::Ok();
}

}  // namespace

Result<engine::PauseRequest> ParsePause(std::string_view body) {
  engine::PauseRequest r;
  if (Status s = ReadExactStrings(body, {{"gid", &r.gid}, {"reason", &r.reason}}); !s.ok()) {
    return s;
  }
  return r;
}

Result<engine::ResolveRequest> ParseResolve(std::string_view body) {
  engine::ResolveRequest r;
  if (Status s = ReadExactStrings(body, {{"gid", &r.gid},
                                         {"branch_id", &r.branch_id},
                                         {"op", &r.op},
                                         {"outcome", &r.outcome},
                                         {"reason", &r.reason}});
      !s.ok()) {
    return s;
  }
  return r;
}

Result<engine::RedirectRequest> ParseRedirect(std::string_view body) {
  engine::RedirectRequest r;
  if (Status s = ReadExactStrings(body, {{"gid", &r.gid},
                                         {"branch_id", &r.branch_id},
                                         {"op", &r.op},
                                         {"url", &r.url},
                                         {"reason", &r.reason}});
      !s.ok()) {
    return s;
  }
  return r;
}

Result<engine::SubscribeRequest> ParseSubscribeBody(std::string_view body) {
  return ParseBody<engine::SubscribeRequest>(
      body, [](const JsonFields& f, engine::SubscribeRequest& r) {
        if (Status s = f.RequireString("topic", r.topic); !s.ok()) return s;
        if (Status s = f.RequireString("url", r.url); !s.ok()) return s;
        return ReadText(f, "remark", r.remark);
      });
}

Result<engine::DeleteTopicRequest> ParseDeleteTopic(std::string_view body) {
  return ParseBody<engine::DeleteTopicRequest>(
      body, [](const JsonFields& f, engine::DeleteTopicRequest& r) {
        return f.RequireString("topic", r.topic);
      });
}

Status ParseStepsJson(std::string_view steps_json, std::vector<engine::RequestStep>& steps,
                      engine::UnreadFields& unread) {
  if (steps_json.find_first_not_of(" \t\r\n") == std::string_view::npos) return Status::Ok();
  auto parsed = ParseJsonText(steps_json, kMaxJsonDepth, "steps");
  if (!parsed) return parsed.status();
  const json& list = *parsed;
  if (list.is_null()) return Status::Ok();
  if (!list.is_array()) return Status::InvalidArgument("steps: must be a JSON array of objects");
  return ReadStepObjects(list, steps, unread);
}

Status ReadCustomData(TransType type, engine::RequestOptions& options) {
  return ReadCustomDataOf(engine::RulesOf(type), options);
}

}  // namespace settle::api