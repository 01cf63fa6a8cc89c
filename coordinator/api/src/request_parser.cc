#include "settle/api/request_parser.h"

#include <charconv>
#include <functional>
#include <initializer_list>

#include "json_fields.h"
#include "settle/net/message.h"
#include "settle/net/url.h"

namespace settle::coordinator {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxSeconds = 10LL * 365 * 24 * 3600;  // ten years
constexpr std::int64_t kMaxRetryLimit = 1'000'000'000;

Status CheckGidValue(const std::string& gid) {
  if (gid.empty()) return Status::InvalidArgument("gid: required");
  if (!IsValidGid(gid)) {
    return Status::InvalidArgument("gid: must be 1 to " + std::to_string(kMaxGidLength) +
                                   " characters of [A-Za-z0-9_.:-]");
  }
  return Status::Ok();
}

Status ReadGid(const JsonFields& fields, std::string& gid) {
  if (Status s = fields.RequireString("gid", gid); !s.ok()) return s;
  return CheckGidValue(gid);
}

Status ReadTransType(const JsonFields& fields, TransType& out) {
  std::string name;
  if (Status s = fields.RequireString("trans_type", name); !s.ok()) return s;
  if (auto t = ParseTransType(name)) {
    out = *t;
    return Status::Ok();
  }
  if (IsKnownUnsupportedTransType(name)) {
    return Status::InvalidArgument("trans_type: unsupported trans_type \"" + name + "\"");
  }
  return Status::InvalidArgument("trans_type: unknown trans_type; expected tcc, saga, msg or xa");
}

// Routes that exist only for some types check trans_type, so that a client that calls one by
// mistake learns why ("registerBranch applies to tcc and xa transactions only").
Status ReadTransTypeOf(const JsonFields& fields, const char* route,
                       std::initializer_list<TransType> allowed, TransType& out) {
  if (Status s = ReadTransType(fields, out); !s.ok()) return s;
  std::string names;
  std::size_t i = 0;
  for (TransType t : allowed) {
    if (t == out) return Status::Ok();
    names += (i == 0 ? "" : i + 1 == allowed.size() ? " and " : ", ") + std::string(ToString(t));
    ++i;
  }
  return Status::InvalidArgument(std::string("trans_type: ") + route + " applies to " + names +
                                 " transactions only");
}

Status ReadUrl(const JsonFields& fields, const char* name, bool required, std::string& out) {
  std::optional<std::string> url;
  if (Status s = fields.ReadString(name, url); !s.ok()) return s;
  if (!url || url->empty()) {
    if (required) return Status::InvalidArgument(fields.PathOf(name) + ": required");
    return Status::Ok();
  }
  if (auto parsed = net::ParseUrl(*url); !parsed) {
    return Status::InvalidArgument(fields.PathOf(name) + ": " + parsed.status().message());
  }
  out = std::move(*url);
  return Status::Ok();
}

Status ReadDuration(const JsonFields& fields, const char* name, std::optional<Duration>& out) {
  std::optional<std::int64_t> seconds;
  if (Status s = fields.ReadCount(name, kMaxSeconds, seconds); !s.ok()) return s;
  if (seconds && *seconds > 0) out = std::chrono::seconds(*seconds);
  return Status::Ok();
}

// custom_data for a saga: {"concurrent":true,"orders":{"1":[0]}}.
Status ReadSagaCustomData(const std::string& custom_data, RequestOptions& options) {
  if (custom_data.empty()) return Status::Ok();
  auto parsed = ParseJsonObject(custom_data, kMaxJsonDepth);
  if (!parsed) {
    return Status::InvalidArgument("custom_data: must be a JSON object encoded as a string");
  }
  JsonFields fields(*parsed, "custom_data.");
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
          w.get<std::int64_t>() > static_cast<std::int64_t>(kMaxSagaSteps)) {
        return Status::InvalidArgument(path + ": must hold step indexes");
      }
      list.push_back(static_cast<int>(w.get<std::int64_t>()));
    }
  }
  return Status::Ok();
}

Status ReadOptions(const JsonFields& fields, RequestOptions& options) {
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
  if (headers) {
    for (const auto& [name, value] : *headers) {
      if (!net::IsValidHeaderName(name)) {
        return Status::InvalidArgument("branch_headers: \"" + name + "\" is not a header name");
      }
      if (!net::IsValidHeaderValue(value)) {
        return Status::InvalidArgument("branch_headers." + name +
                                       ": must not contain control characters");
      }
    }
    options.branch_headers = std::move(*headers);
  }
  std::optional<std::string> custom_data;
  if (Status s = fields.ReadString("custom_data", custom_data); !s.ok()) return s;
  options.custom_data = custom_data.value_or("");
  return Status::Ok();
}

// Kahn's algorithm over the waits-for graph: every step must be reachable without a cycle.
bool HasCycle(const std::map<int, std::vector<int>>& orders, std::size_t steps) {
  std::vector<int> pending(steps, 0);
  std::vector<std::vector<int>> dependents(steps);
  for (const auto& [step, waits] : orders) {
    for (int w : waits) {
      ++pending[static_cast<std::size_t>(step)];
      dependents[static_cast<std::size_t>(w)].push_back(step);
    }
  }
  std::vector<int> ready;
  for (std::size_t i = 0; i < steps; ++i) {
    if (pending[i] == 0) ready.push_back(static_cast<int>(i));
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const int step = ready.back();
    ready.pop_back();
    ++done;
    for (int d : dependents[static_cast<std::size_t>(step)]) {
      if (--pending[static_cast<std::size_t>(d)] == 0) ready.push_back(d);
    }
  }
  return done != steps;
}

Status CheckOrders(const RequestOptions& options, std::size_t steps) {
  for (const auto& [step, waits] : options.orders) {
    const std::string path = "custom_data.orders." + std::to_string(step);
    if (static_cast<std::size_t>(step) >= steps) {
      return Status::InvalidArgument(path + ": no such step");
    }
    for (int w : waits) {
      if (static_cast<std::size_t>(w) >= steps) {
        return Status::InvalidArgument(path + ": waits for step " + std::to_string(w) +
                                       ", which does not exist");
      }
      if (w == step) return Status::InvalidArgument(path + ": a step cannot wait for itself");
    }
  }
  if (HasCycle(options.orders, steps)) {
    return Status::InvalidArgument("custom_data.orders: the steps wait for each other in a cycle");
  }
  return Status::Ok();
}

// A message step's action: an http(s) URL, or topic://NAME.
Status ReadMsgAction(const JsonFields& fields, std::string& out) {
  std::optional<std::string> action;
  if (Status s = fields.ReadString("action", action); !s.ok()) return s;
  if (action && action->starts_with(kTopicPrefix)) {
    const std::string topic = action->substr(kTopicPrefix.size());
    if (!IsValidTopic(topic)) {
      return Status::InvalidArgument(fields.PathOf("action") +
                                     ": a topic must be 1 to 128 characters of [A-Za-z0-9_.:-]");
    }
    out = std::move(*action);
    return Status::Ok();
  }
  return ReadUrl(fields, "action", true, out);
}

// A saga's steps (action and compensate), or with `msg` a message's (action only) with their
// payloads.
Status ReadSteps(const JsonFields& fields, bool msg, std::vector<SagaStep>& steps) {
  const char* kind = msg ? "a message" : "a saga";
  const json* list = fields.Member("steps");
  if (list == nullptr) return Status::InvalidArgument(std::string("steps: required for ") + kind);
  if (!list->is_array()) return Status::InvalidArgument("steps: must be an array");
  if (list->empty()) {
    return Status::InvalidArgument(std::string("steps: ") + kind + " needs at least one step");
  }
  if (list->size() > kMaxSagaSteps) {
    return Status::InvalidArgument("steps: at most " + std::to_string(kMaxSagaSteps) + " steps");
  }
  const json* payloads = fields.Member("payloads");
  if (payloads == nullptr) return Status::InvalidArgument("payloads: required, one per step");
  if (!payloads->is_array()) return Status::InvalidArgument("payloads: must be an array");
  if (payloads->size() != list->size()) {
    return Status::InvalidArgument("payloads: " + std::to_string(payloads->size()) +
                                   " payloads for " + std::to_string(list->size()) +
                                   " steps; expected one per step");
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string prefix = "steps[" + std::to_string(i) + "]";
    const json& item = (*list)[i];
    if (!item.is_object()) return Status::InvalidArgument(prefix + ": must be an object");
    JsonFields step_fields(item, prefix + ".");
    SagaStep step;
    if (msg) {
      if (Status s = ReadMsgAction(step_fields, step.action_url); !s.ok()) return s;
      std::string compensate;
      if (Status s = ReadUrl(step_fields, "compensate", false, compensate); !s.ok()) return s;
      if (!compensate.empty()) {
        return Status::InvalidArgument(prefix +
                                       ".compensate: a message step has nothing to compensate");
      }
    } else {
      if (Status s = ReadUrl(step_fields, "action", true, step.action_url); !s.ok()) return s;
      if (Status s = ReadUrl(step_fields, "compensate", false, step.compensate_url); !s.ok()) {
        return s;
      }
    }
    const json& payload = (*payloads)[i];
    if (!payload.is_string()) {
      return Status::InvalidArgument("payloads[" + std::to_string(i) +
                                     "]: must be a string (the JSON-encoded body)");
    }
    step.payload = payload.get<std::string>();
    steps.push_back(std::move(step));
  }
  return Status::Ok();
}

// custom_data for a message: {"delay": seconds}, how long after its creation the first
// delivery may go out.
Status ReadMsgCustomData(const std::string& custom_data, RequestOptions& options) {
  if (custom_data.empty()) return Status::Ok();
  auto parsed = ParseJsonObject(custom_data, kMaxJsonDepth);
  if (!parsed) {
    return Status::InvalidArgument("custom_data: must be a JSON object encoded as a string");
  }
  JsonFields fields(*parsed, "custom_data.");
  return ReadDuration(fields, "delay", options.delay);
}

// A message's steps, custom_data and query_prepared (required when preparing).
Status ReadMsg(const JsonFields& fields, bool preparing, RequestOptions& options,
               std::vector<SagaStep>& steps, std::string& query_prepared) {
  if (Status s = ReadMsgCustomData(options.custom_data, options); !s.ok()) return s;
  if (Status s = ReadSteps(fields, true, steps); !s.ok()) return s;
  return ReadUrl(fields, "query_prepared", preparing, query_prepared);
}

template <typename T>
using Reader = std::function<Status(const JsonFields&, T&)>;

template <typename T>
Result<T> ParseBody(std::string_view body, const Reader<T>& read) {
  auto parsed = ParseJsonObject(body, kMaxJsonDepth);
  if (!parsed) return parsed.status();
  T request;
  if (Status s = read(JsonFields(*parsed), request); !s.ok()) return s;
  return request;
}

std::optional<std::string> Param(const QueryParams& params, const std::string& name) {
  auto it = params.find(name);
  if (it == params.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

}  // namespace

Result<PrepareRequest> ParsePrepare(std::string_view body) {
  return ParseBody<PrepareRequest>(body, [](const JsonFields& f, PrepareRequest& r) {
    if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
    const auto types = {TransType::kTcc, TransType::kXa, TransType::kMsg};
    if (Status s = ReadTransTypeOf(f, "prepare", types, r.trans_type); !s.ok()) return s;
    if (Status s = ReadOptions(f, r.options); !s.ok()) return s;
    if (r.trans_type != TransType::kMsg) return Status::Ok();
    return ReadMsg(f, true, r.options, r.steps, r.query_prepared);
  });
}

Result<RegisterBranchRequest> ParseRegisterBranch(std::string_view body) {
  return ParseBody<RegisterBranchRequest>(body, [](const JsonFields& f, RegisterBranchRequest& r) {
    if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
    const auto types = {TransType::kTcc, TransType::kXa};
    if (Status s = ReadTransTypeOf(f, "registerBranch", types, r.trans_type); !s.ok()) return s;
    if (Status s = f.RequireString("branch_id", r.branch_id); !s.ok()) return s;
    if (!IsValidBranchId(r.branch_id)) {
      return Status::InvalidArgument("branch_id: must be 1 to " +
                                     std::to_string(kMaxBranchIdLength) +
                                     " characters of [A-Za-z0-9_.:-]");
    }
    std::optional<std::string> data;
    if (Status s = f.ReadString("data", data); !s.ok()) return s;
    r.data = data.value_or("");
    if (r.trans_type == TransType::kXa) return ReadUrl(f, "url", true, r.url);
    if (Status s = ReadUrl(f, "confirm", true, r.confirm_url); !s.ok()) return s;
    return ReadUrl(f, "cancel", true, r.cancel_url);
  });
}

Result<SubmitRequest> ParseSubmit(std::string_view body) {
  return ParseBody<SubmitRequest>(body, [](const JsonFields& f, SubmitRequest& r) {
    if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
    if (Status s = ReadTransType(f, r.trans_type); !s.ok()) return s;
    if (Status s = ReadOptions(f, r.options); !s.ok()) return s;
    if (r.trans_type == TransType::kMsg) {
      return ReadMsg(f, false, r.options, r.steps, r.query_prepared);
    }
    if (r.trans_type != TransType::kSaga) return Status::Ok();
    if (Status s = ReadSagaCustomData(r.options.custom_data, r.options); !s.ok()) return s;
    if (Status s = ReadSteps(f, false, r.steps); !s.ok()) return s;
    return CheckOrders(r.options, r.steps.size());
  });
}

Result<AbortRequest> ParseAbort(std::string_view body) {
  return ParseBody<AbortRequest>(body, [](const JsonFields& f, AbortRequest& r) {
    if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
    const auto types = {TransType::kTcc, TransType::kXa, TransType::kMsg};
    if (Status s = ReadTransTypeOf(f, "abort", types, r.trans_type); !s.ok()) return s;
    std::optional<std::string> reason;
    if (Status s = f.ReadString("rollback_reason", reason); !s.ok()) return s;
    r.rollback_reason = reason.value_or("");
    if (r.rollback_reason.size() > kMaxReasonLength) {
      return Status::InvalidArgument("rollback_reason: longer than " +
                                     std::to_string(kMaxReasonLength) + " bytes");
    }
    std::optional<bool> wait;
    if (Status s = f.ReadBool("wait_result", wait); !s.ok()) return s;
    r.wait_result = wait.value_or(false);
    return Status::Ok();
  });
}

Result<std::string> ParseGidBody(std::string_view body) {
  return ParseBody<std::string>(
      body, [](const JsonFields& f, std::string& gid) { return ReadGid(f, gid); });
}

Result<ForceStopRequest> ParseForceStop(std::string_view body) {
  return ParseBody<ForceStopRequest>(body, [](const JsonFields& f, ForceStopRequest& r) {
    if (Status s = ReadGid(f, r.gid); !s.ok()) return s;
    std::optional<std::string> reason;
    if (Status s = f.ReadString("reason", reason); !s.ok()) return s;
    r.reason = reason.value_or("");
    if (r.reason.size() > kMaxReasonLength) {
      return Status::InvalidArgument("reason: longer than " + std::to_string(kMaxReasonLength) +
                                     " bytes");
    }
    return Status::Ok();
  });
}

namespace {

Status CheckTopic(const std::string& topic) {
  if (topic.empty()) return Status::InvalidArgument("topic: required");
  if (!IsValidTopic(topic)) {
    return Status::InvalidArgument("topic: must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  }
  return Status::Ok();
}

Status CheckSubscription(const SubscribeRequest& r) {
  if (Status s = CheckTopic(r.topic); !s.ok()) return s;
  if (r.url.empty()) return Status::InvalidArgument("url: required");
  if (auto parsed = net::ParseUrl(r.url); !parsed) {
    return Status::InvalidArgument("url: " + parsed.status().message());
  }
  if (r.remark.size() > kMaxReasonLength) {
    return Status::InvalidArgument("remark: longer than " + std::to_string(kMaxReasonLength) +
                                   " bytes");
  }
  return Status::Ok();
}

}  // namespace

Result<SubscribeRequest> ParseSubscribeQuery(const QueryParams& params) {
  SubscribeRequest r;
  r.topic = Param(params, "topic").value_or("");
  r.url = Param(params, "url").value_or("");
  r.remark = Param(params, "remark").value_or("");
  if (Status s = CheckSubscription(r); !s.ok()) return s;
  return r;
}

Result<SubscribeRequest> ParseSubscribeBody(std::string_view body) {
  return ParseBody<SubscribeRequest>(body, [](const JsonFields& f, SubscribeRequest& r) {
    if (Status s = f.RequireString("topic", r.topic); !s.ok()) return s;
    if (Status s = f.RequireString("url", r.url); !s.ok()) return s;
    std::optional<std::string> remark;
    if (Status s = f.ReadString("remark", remark); !s.ok()) return s;
    r.remark = remark.value_or("");
    return CheckSubscription(r);
  });
}

Result<std::string> ParseTopicBody(std::string_view body) {
  return ParseBody<std::string>(body, [](const JsonFields& f, std::string& topic) {
    if (Status s = f.RequireString("topic", topic); !s.ok()) return s;
    return CheckTopic(topic);
  });
}

Result<std::string> ParseQueryGid(const QueryParams& params) {
  std::string gid = Param(params, "gid").value_or("");
  if (Status s = CheckGidValue(gid); !s.ok()) return s;
  return gid;
}

Result<storage::ListQuery> ParseListQuery(const QueryParams& params) {
  storage::ListQuery query;
  if (auto status = Param(params, "status")) {
    query.status = ParseGlobalStatus(*status);
    if (!query.status) {
      return Status::InvalidArgument(
          "status: expected prepared, submitted, aborting, succeed or failed");
    }
  }
  if (auto type = Param(params, "trans_type")) {
    query.trans_type = ParseTransType(*type);
    if (!query.trans_type) {
      return Status::InvalidArgument("trans_type: expected tcc, saga, msg or xa");
    }
  }
  if (auto stuck = Param(params, "stuck")) {
    if (*stuck != "true" && *stuck != "false") {
      return Status::InvalidArgument("stuck: expected true or false");
    }
    query.stuck = *stuck == "true";
  }
  auto read_number = [](const std::string& text, std::int64_t& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  };
  if (auto limit = Param(params, "limit")) {
    std::int64_t n = 0;
    if (!read_number(*limit, n) || n < 1 || n > 1000) {
      return Status::InvalidArgument("limit: expected a whole number from 1 to 1000");
    }
    query.limit = static_cast<std::size_t>(n);
  }
  if (auto position = Param(params, "position")) {
    std::int64_t id = 0;
    if (!read_number(*position, id) || id < 1) {
      return Status::InvalidArgument("position: expected a next_position from an earlier page");
    }
    query.before_id = id;
  }
  return query;
}

}  // namespace settle::coordinator
