// The coordinator's request parsing and the engine's checks of what it parsed: JSON bodies of
// prepare, registerBranch, submit, abort, forceStop/resetNextCronTime, and the query strings of
// /query and /all (through net::ParseQueryString, as RequestReader splits them).
// request_parser.h and the engine's checks (transaction_types.h) promise pure functions that
// never throw and fail only with InvalidArgument naming the field; what passes both is what
// the coordinator acts on, and must be valid: each of those is checked. Branch URLs may be
// http:// or https:// (ParseUrl) or gRPC methods (ParseGrpcTarget). The members nothing read
// are named (request_fields.h) in a form safe for a header line, and a request's fingerprint
// matches itself (request_fingerprint.h).
//
// Input: [function selector] body or query string...

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "settle/api/bulk_request_parser.h"
#include "settle/api/request_parser.h"
#include "settle/core/ascii.h"
#include "settle/core/grpc_target.h"
#include "settle/core/header_syntax.h"
#include "settle/core/protocol.h"
#include "settle/core/url.h"
#include "settle/engine/msg_engine.h"
#include "settle/engine/request_fields.h"
#include "settle/engine/request_fingerprint.h"
#include "settle/engine/request_rules.h"
#include "settle/engine/transaction_types.h"
#include "settle/engine/two_phase_engine.h"
#include "settle/net/message.h"

namespace settle::fuzz {
namespace {

using engine::kMaxReasonLength;
using engine::kMaxSagaSteps;
using engine::RequestOptions;

constexpr std::int64_t kTenYearsMillis = 10LL * 365 * 24 * 3600 * 1000;

// Every field a message may start with, followed by ':', '.' or '['.
bool NamesAField(const std::string& message) {
  static constexpr std::string_view kFields[] = {"body",
                                                 "gid",
                                                 "trans_type",
                                                 "branch_id",
                                                 "data",
                                                 "confirm",
                                                 "cancel",
                                                 "url",
                                                 "query_prepared",
                                                 "reason",
                                                 "steps",
                                                 "payloads",
                                                 "custom_data",
                                                 "wait_result",
                                                 "concurrent",
                                                 "timeout_to_fail",
                                                 "request_timeout",
                                                 "retry_interval",
                                                 "retry_limit",
                                                 "branch_headers",
                                                 "rollback_reason",
                                                 "status",
                                                 "stuck",
                                                 "limit",
                                                 "position",
                                                 "gid_prefix",
                                                 "create_time_start",
                                                 "create_time_end",
                                                 "createTimeStart",
                                                 "createTimeEnd",
                                                 "host",
                                                 "paused",
                                                 "op",
                                                 "outcome",
                                                 "action",
                                                 "filter",
                                                 "all",
                                                 "dry_run",
                                                 "from",
                                                 "to",
                                                 "id"};
  for (std::string_view field : kFields) {
    if (message.size() > field.size() && message.compare(0, field.size(), field) == 0) {
      const char next = message[field.size()];
      if (next == ':' || next == '.' || next == '[') return true;
    }
  }
  return false;
}

// The unknown members of a parsed request, as Settle-Ignored-Fields names them: visible ASCII,
// separated by ", ", never a CR or LF (a header line).
void CheckUnknownFields(const engine::UnreadFields& unread) {
  const std::string list = engine::ListOfFields(engine::UnknownFields(unread));
  for (char c : list) FUZZ_CHECK(c == ' ' || (c > 0x20 && c < 0x7f));
}

template <typename T>
void CheckFailure(const Result<T>& result) {
  if (result) return;
  FUZZ_CHECK(result.status().code() == StatusCode::kInvalidArgument);
  FUZZ_CHECK(NamesAField(result.status().message()));
}

// The parsed request once the engine's `check` passed it, as the coordinator acts on it; the
// failure of either checked like a parser's.
template <typename T>
Result<T> Checked(Result<T> parsed, Status (*check)(const T&)) {
  if (parsed) CheckUnknownFields(parsed->unread_fields);
  if (parsed) {
    if (Status s = check(*parsed); !s.ok()) parsed = s;
  }
  CheckFailure(parsed);
  return parsed;
}

// An address a branch caller can call: http:// or https://, as ParseUrl takes it, or a gRPC
// method, as ParseGrpcTarget takes it.
bool IsUrl(const std::string& url) {
  return static_cast<bool>(ParseUrl(url)) || static_cast<bool>(ParseGrpcTarget(url));
}

void CheckDuration(const std::optional<Duration>& d) {
  if (d) FUZZ_CHECK(d->count() > 0 && d->count() <= kTenYearsMillis);  // 0 means "not sent"
}

void ExpectValidOptions(const RequestOptions& o) {
  CheckDuration(o.timeout_to_fail);
  CheckDuration(o.request_timeout);
  CheckDuration(o.retry_interval);
  FUZZ_CHECK(o.retry_limit >= 0);
  for (const auto& [name, value] : o.branch_headers) {
    FUZZ_CHECK(IsValidHeaderName(name));
    FUZZ_CHECK(IsValidHeaderValue(value));
  }
}

void FuzzSubmit(std::string_view body) {
  const auto r = Checked(api::ParseSubmit(body), &engine::CheckSubmit);
  if (!r) return;
  FUZZ_CHECK(IsValidGid(r->gid));
  const std::string fingerprint = engine::FingerprintOf(*r);
  FUZZ_CHECK(engine::MatchStored(r->gid, fingerprint, engine::Repeat{fingerprint, {}}).ok());
  ExpectValidOptions(r->options);
  if (r->trans_type != TransType::kSaga && r->trans_type != TransType::kMsg) {
    FUZZ_CHECK(r->steps.empty());
    return;
  }
  const std::size_t steps = r->steps.size();
  FUZZ_CHECK(steps >= 1 && steps <= kMaxSagaSteps);
  FUZZ_CHECK(r->payloads.size() == steps);
  if (r->trans_type == TransType::kMsg) {
    for (const auto& step : r->steps) {
      FUZZ_CHECK(step.compensate_url.empty());
      FUZZ_CHECK(IsUrl(step.action_url) || step.action_url.starts_with(engine::kTopicPrefix));
    }
    return;
  }
  for (const auto& step : r->steps) {
    FUZZ_CHECK(IsUrl(step.action_url));
    FUZZ_CHECK(step.compensate_url.empty() || IsUrl(step.compensate_url));
  }
  for (const auto& [step, waits] : r->options.orders) {
    FUZZ_CHECK(step >= 0 && static_cast<std::size_t>(step) < steps);
    for (int w : waits) {
      FUZZ_CHECK(w >= 0 && static_cast<std::size_t>(w) < steps && w != step);
    }
  }
}

void FuzzPrepare(std::string_view body) {
  const auto r = Checked(api::ParsePrepare(body), &engine::CheckPrepare);
  if (!r) return;
  FUZZ_CHECK(IsValidGid(r->gid));
  ExpectValidOptions(r->options);
}

void FuzzRegisterBranch(std::string_view body) {
  const auto r = Checked(api::ParseRegisterBranch(body), &engine::CheckRegisterBranch);
  if (!r) return;
  FUZZ_CHECK(IsValidGid(r->gid));
  FUZZ_CHECK(IsValidBranchId(r->branch_id));
  if (r->trans_type == TransType::kXa) {
    FUZZ_CHECK(IsUrl(r->url));
    return;
  }
  FUZZ_CHECK(IsUrl(r->confirm_url));
  FUZZ_CHECK(IsUrl(r->cancel_url));
}

void FuzzAbort(std::string_view body) {
  const auto r = Checked(api::ParseAbort(body), &engine::CheckAbort);
  if (!r) return;
  FUZZ_CHECK(IsValidGid(r->gid));
  FUZZ_CHECK(r->rollback_reason.size() <= kMaxReasonLength);
}

// resetNextCronTime's body, and forceStop's (the same gid, and an optional reason).
void FuzzGidBody(std::string_view body) {
  const auto r = api::ParseRetryNow(body);
  if (r) CheckUnknownFields(r->unread_fields);
  if (r && engine::CheckGid(r->gid).ok()) FUZZ_CHECK(IsValidGid(r->gid));
  const auto stop = Checked(api::ParseForceStop(body), &engine::CheckForceStop);
  if (!stop) return;
  FUZZ_CHECK(IsValidGid(stop->gid));
  FUZZ_CHECK(stop->reason.size() <= kMaxReasonLength);
  FUZZ_CHECK(stop->actor.empty());
}

void FuzzQueryGid(std::string_view query) {
  const auto r = api::ParseQueryGid(net::ParseQueryString(query));
  CheckFailure(r);
  if (r) FUZZ_CHECK(IsValidGid(*r));
}

void FuzzListQuery(std::string_view query) {
  const auto r = api::ParseListQuery(net::ParseQueryString(query));
  CheckFailure(r);
  if (!r) return;
  FUZZ_CHECK(r->limit >= 1 && r->limit <= 1000);
  if (r->before_id) FUZZ_CHECK(*r->before_id >= 1);
  if (r->gid_prefix) FUZZ_CHECK(IsValidGid(*r->gid_prefix));
  if (r->create_time_start && r->create_time_end) {
    FUZZ_CHECK(*r->create_time_start <= *r->create_time_end);
  }
  // A host is kept as an origin, lower-case, that parses again as itself.
  if (r->host) {
    const std::string& host = *r->host;
    for (char c : host) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
    if (host.starts_with("http://") || host.starts_with("https://")) {
      const auto url = ParseUrl(host);
      FUZZ_CHECK(url && url->path_and_query == "/" && AsciiLowercase(url->Origin()) == host);
    } else {
      const auto origin = ParseGrpcOrigin(host);
      FUZZ_CHECK(origin && (host.starts_with("grpc://") || host.starts_with("grpcs://")) &&
                 AsciiLowercase(origin->Origin()) == host);
    }
  }
}

// The admin API's bodies (pause, resume, resend; resolve; redirect): an object of required
// string members and nothing else. A refusal names its field, or the unknown member it found.
template <typename T>
void CheckAdminFailure(const Result<T>& result) {
  if (result) return;
  FUZZ_CHECK(result.status().code() == StatusCode::kInvalidArgument);
  const std::string& message = result.status().message();
  FUZZ_CHECK(NamesAField(message) ||
             message.find(": unknown member; expected only ") != std::string::npos);
}

void FuzzAdminBodies(std::string_view body) {
  const auto pause = api::ParsePause(body);
  CheckAdminFailure(pause);
  if (pause) {
    const Status checked = engine::CheckPause(*pause);
    if (!checked.ok()) FUZZ_CHECK(NamesAField(checked.message()));
    if (checked.ok()) {
      FUZZ_CHECK(IsValidGid(pause->gid));
      FUZZ_CHECK(!pause->reason.empty() && pause->reason.size() <= kMaxReasonLength);
    }
    FUZZ_CHECK(pause->actor.empty());
  }
  const auto resolve = api::ParseResolve(body);
  CheckAdminFailure(resolve);
  if (resolve) FUZZ_CHECK(resolve->actor.empty());
  const auto redirect = api::ParseRedirect(body);
  CheckAdminFailure(redirect);
  if (redirect) {
    FUZZ_CHECK(redirect->actor.empty());
    const Status url = engine::CheckUrl("url", redirect->url, true);
    if (!url.ok()) FUZZ_CHECK(NamesAField(url.message()));
  }
  // A bulk action: what it acts on is never "everything" by accident, a redirect filters on
  // its own from, and the filter a job stores reads back as it was.
  const auto bulk = api::ParseBulk(body, FromUnixMillis(1'800'000'000'000));
  CheckAdminFailure(bulk);
  if (bulk) {
    const drive::BulkRequest& r = bulk->request;
    FUZZ_CHECK(r.actor.empty());
    FUZZ_CHECK(r.all || !drive::FilterIsEmpty(r.filter));
    FUZZ_CHECK(bulk->dry_run || !r.reason.empty());
    if (r.action == drive::BulkAction::kRedirect) {
      FUZZ_CHECK(!r.from.empty() && r.from != r.to && r.filter.host == r.from);
    }
    const auto stored = drive::DecodeFilter(drive::EncodeFilter(r.filter));
    FUZZ_CHECK(stored.ok());
    if (stored) FUZZ_CHECK(drive::EncodeFilter(*stored) == drive::EncodeFilter(r.filter));
  }
  CheckAdminFailure(api::ParseJobAsk(body));
}

}  // namespace
}  // namespace settle::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace settle::fuzz;
  Input input(data, size);
  const std::uint8_t selector = input.Byte();
  const std::string_view text = input.rest();
  switch (selector % 8) {
    case 0:
      FuzzSubmit(text);
      break;
    case 1:
      FuzzPrepare(text);
      break;
    case 2:
      FuzzRegisterBranch(text);
      break;
    case 3:
      FuzzAbort(text);
      break;
    case 4:
      FuzzGidBody(text);
      break;
    case 5:
      FuzzListQuery(text);
      break;
    case 6:
      FuzzQueryGid(text);
      break;
    case 7:
      FuzzAdminBodies(text);
      break;
  }
  return 0;
}
