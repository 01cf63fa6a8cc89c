// The parsers of query strings: the lists' filters and pages, a transaction's gid, a
// subscription given in the URL. The bodies' parsers are in request_parser.cc.
#include <algorithm>
#include <charconv>

#include "settle/api/request_parser.h"
#include "settle/core/ascii.h"
#include "settle/core/grpc_target.h"
#include "settle/core/time_text.h"
#include "settle/core/url.h"
#include "settle/engine/request_rules.h"

namespace settle::api {
namespace {

// A participant host as /api/admin/hosts names it (scheme://host:port), or any branch URL on it
// (http(s), or a gRPC method in any of its forms): its origin, lower-case, with its port, as
// calls::OriginOf gives it.
Result<std::string> ParseHostOrigin(const std::string& host) {
  const auto refuse = [] {
    return Status::InvalidArgument(
        "host: expected a participant host as scheme://host:port (http://bank:8080, "
        "grpc://bank:50051) or a branch URL on it");
  };
  if (LooksLikeGrpcTarget(host)) {
    if (Result<GrpcTarget> origin = ParseGrpcOrigin(host)) return AsciiLowercase(origin->Origin());
    if (Result<GrpcTarget> target = ParseGrpcTarget(host)) return AsciiLowercase(target->Origin());
    return refuse();
  }
  Result<Url> url = ParseUrl(host);
  if (!url) return refuse();
  return AsciiLowercase(url->Origin());
}

std::optional<std::string> Param(const QueryParams& params, const std::string& name) {
  auto it = params.find(name);
  if (it == params.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

// A list's `limit` (1..1000) and `position` (an earlier page's next_position: an id), each
// left as it is when absent.
Status ReadPage(const QueryParams& params, std::size_t& limit,
                std::optional<std::int64_t>& before_id) {
  auto read_number = [](const std::string& text, std::int64_t& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  };
  if (auto text = Param(params, "limit")) {
    std::int64_t n = 0;
    if (!read_number(*text, n) || n < 1 || n > 1000) {
      return Status::InvalidArgument("limit: expected a whole number from 1 to 1000");
    }
    limit = static_cast<std::size_t>(n);
  }
  if (auto position = Param(params, "position")) {
    std::int64_t id = 0;
    if (!read_number(*position, id) || id < 1) {
      return Status::InvalidArgument("position: expected a next_position from an earlier page");
    }
    before_id = id;
  }
  return Status::Ok();
}

}  // namespace

Result<engine::SubscribeRequest> ParseSubscribeQuery(const QueryParams& params) {
  engine::SubscribeRequest r;
  r.topic = Param(params, "topic").value_or("");
  r.url = Param(params, "url").value_or("");
  r.remark = Param(params, "remark").value_or("");
  return r;
}

Result<bool> ParseQueryPayloads(const QueryParams& params) {
  auto payloads = Param(params, "payloads");
  if (!payloads) return false;
  if (*payloads != "true" && *payloads != "false") {
    return Status::InvalidArgument("payloads: expected true or false");
  }
  return *payloads == "true";
}

Result<std::string> ParseQueryGid(const QueryParams& params) {
  std::string gid = Param(params, "gid").value_or("");
  if (Status s = engine::CheckGid(gid); !s.ok()) return s;
  return gid;
}

Result<storage::AuditQuery> ParseAuditQuery(const QueryParams& params) {
  storage::AuditQuery query;
  if (auto gid = Param(params, "gid")) {
    if (Status s = engine::CheckGid(*gid); !s.ok()) return s;
    query.gid = *gid;
  }
  query.actor = Param(params, "actor");
  if (auto action = Param(params, "action")) {
    const auto& known = storage::kAuditActions;
    if (std::find(std::begin(known), std::end(known), *action) == std::end(known)) {
      std::string expected;
      for (std::string_view name : known) {
        expected += (expected.empty() ? "" : ", ") + std::string(name);
      }
      return Status::InvalidArgument("action: expected one of " + expected);
    }
    query.action = *action;
  }
  if (Status s = ReadPage(params, query.limit, query.before_id); !s.ok()) return s;
  return query;
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
      return Status::InvalidArgument("trans_type: expected tcc, saga, msg, xa or workflow");
    }
  }
  if (auto stuck = Param(params, "stuck")) {
    if (*stuck != "true" && *stuck != "false") {
      return Status::InvalidArgument("stuck: expected true or false");
    }
    query.stuck = *stuck == "true";
  }
  if (auto paused = Param(params, "paused")) {
    if (*paused != "true" && *paused != "false") {
      return Status::InvalidArgument("paused: expected true or false");
    }
    query.paused = *paused == "true";
  }
  if (Status s = ReadPage(params, query.limit, query.before_id); !s.ok()) return s;
  if (auto prefix = Param(params, "gid_prefix")) {
    if (!IsValidGid(*prefix)) {
      return Status::InvalidArgument("gid_prefix: must be 1 to " + std::to_string(kMaxGidLength) +
                                     " characters of [A-Za-z0-9_.:-]");
    }
    query.gid_prefix = *prefix;
  }
  auto read_time = [&params](const std::string& name, const std::string& dtm_name,
                             std::optional<TimePoint>& out) -> Status {
    const bool settle_name = Param(params, name).has_value();
    const std::string& used = settle_name ? name : dtm_name;
    const std::optional<std::string> text = Param(params, used);
    if (!text) return Status::Ok();
    Result<TimePoint> t = ParseTimeText(*text);
    if (!t) return Status::InvalidArgument(used + ": " + t.status().message());
    out = *t;
    return Status::Ok();
  };
  if (Status s = read_time("create_time_start", "createTimeStart", query.create_time_start);
      !s.ok()) {
    return s;
  }
  if (Status s = read_time("create_time_end", "createTimeEnd", query.create_time_end); !s.ok()) {
    return s;
  }
  if (query.create_time_start && query.create_time_end &&
      *query.create_time_end < *query.create_time_start) {
    return Status::InvalidArgument("create_time_end: before create_time_start");
  }
  if (auto host = Param(params, "host")) {
    auto origin = ParseHostOrigin(*host);
    if (!origin) return origin.status();
    query.host = std::move(origin).value();
  }
  return query;
}

Result<std::size_t> ParseQueryPosition(const QueryParams& params) {
  auto position = Param(params, "position");
  if (!position) return std::size_t{0};
  std::size_t index = 0;
  const auto [end, ec] =
      std::from_chars(position->data(), position->data() + position->size(), index);
  if (ec != std::errc() || end != position->data() + position->size() || index > 1'000'000) {
    return Status::InvalidArgument("position: expected a next_position from an earlier page");
  }
  return index;
}

Result<std::string> ParseTopicsPosition(const QueryParams& params) {
  std::string position = Param(params, "position").value_or("");
  if (!position.empty() && !IsValidTopic(position)) {
    return Status::InvalidArgument("position: expected a next_position from an earlier page");
  }
  return position;
}

}  // namespace settle::api
