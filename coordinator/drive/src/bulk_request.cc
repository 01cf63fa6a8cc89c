#include "settle/drive/bulk_request.h"

#include <nlohmann/json.hpp>

#include <array>

#include "settle/core/ascii.h"
#include "settle/core/grpc_target.h"
#include "settle/core/url.h"
#include "settle/core/url_origin.h"

namespace settle::drive {
namespace {

constexpr std::array<std::pair<BulkAction, std::string_view>, 5> kActionNames = {{
    {BulkAction::kRetryNow, "retry_now"},
    {BulkAction::kPause, "pause"},
    {BulkAction::kResume, "resume"},
    {BulkAction::kForceStop, "force_stop"},
    {BulkAction::kRedirect, "redirect"},
}};

// A participant host as an operator writes it, normalised as calls::OriginOf writes a url's:
// http(s)://host[:port][/] or a gRPC origin (grpc://host:port, grpcs://..., host:port).
std::optional<std::string> OriginNamed(const std::string& text) {
  if (LooksLikeGrpcTarget(text)) {
    Result<GrpcTarget> origin = ParseGrpcOrigin(text);
    if (!origin) return std::nullopt;
    return AsciiLowercase(origin->Origin());
  }
  Result<Url> url = ParseUrl(text);
  if (!url || url->path_and_query != "/") return std::nullopt;
  return AsciiLowercase(url->Origin());
}

bool IsGrpcOrigin(std::string_view origin) {
  return origin.starts_with("grpc://") || origin.starts_with("grpcs://");
}

}  // namespace

std::string_view ToString(BulkAction action) {
  for (const auto& [a, name] : kActionNames) {
    if (a == action) return name;
  }
  return "retry_now";
}

std::optional<BulkAction> ParseBulkAction(std::string_view name) {
  for (const auto& [a, n] : kActionNames) {
    if (n == name) return a;
  }
  return std::nullopt;
}

bool FilterIsEmpty(const storage::ListQuery& f) {
  return !f.status && !f.trans_type && !f.stuck && !f.paused && !f.Searches();
}

Status CheckBulkRequest(BulkRequest& request) {
  if (request.action == BulkAction::kRedirect) {
    const auto from = OriginNamed(request.from);
    if (!from) {
      return Status::InvalidArgument(
          "from: expected the participant host calls go to now, as scheme://host:port");
    }
    const auto to = OriginNamed(request.to);
    if (!to) {
      return Status::InvalidArgument(
          "to: expected the participant host to send them to, as scheme://host:port");
    }
    if (IsGrpcOrigin(*from) != IsGrpcOrigin(*to)) {
      return Status::InvalidArgument("to: " + *to + " does not speak " + *from + "'s protocol");
    }
    if (*from == *to) return Status::InvalidArgument("to: the same host as from");
    if (request.filter.host && *request.filter.host != *from) {
      return Status::InvalidArgument("filter.host: a redirect's host is its from");
    }
    request.from = *from;
    request.to = *to;
    request.filter.host = *from;
  } else if (!request.from.empty() || !request.to.empty()) {
    return Status::InvalidArgument(std::string(request.from.empty() ? "to" : "from") +
                                   ": only a redirect has hosts");
  }
  if (FilterIsEmpty(request.filter) && !request.all) {
    return Status::InvalidArgument(
        "filter: empty, which matches every transaction; name some, or send all=true");
  }
  return Status::Ok();
}

std::string EncodeFilter(const storage::ListQuery& f) {
  nlohmann::json j = nlohmann::json::object();
  if (f.status) j["status"] = ToString(*f.status);
  if (f.trans_type) j["trans_type"] = ToString(*f.trans_type);
  if (f.stuck) j["stuck"] = *f.stuck;
  if (f.paused) j["paused"] = *f.paused;
  if (f.gid_prefix) j["gid_prefix"] = *f.gid_prefix;
  if (f.create_time_start) j["create_time_start"] = ToUnixMillis(*f.create_time_start);
  if (f.create_time_end) j["create_time_end"] = ToUnixMillis(*f.create_time_end);
  if (f.host) j["host"] = *f.host;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<storage::ListQuery> DecodeFilter(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  const auto refuse = [](const std::string& what) {
    return Status::InvalidArgument("job filter: " + what);
  };
  if (!j.is_object()) return refuse("not a JSON object");
  storage::ListQuery f;
  for (const auto& [key, value] : j.items()) {
    if (key == "status" && value.is_string()) {
      f.status = ParseGlobalStatus(value.get<std::string>());
      if (!f.status) return refuse("status");
    } else if (key == "trans_type" && value.is_string()) {
      f.trans_type = ParseTransType(value.get<std::string>());
      if (!f.trans_type) return refuse("trans_type");
    } else if (key == "stuck" && value.is_boolean()) {
      f.stuck = value.get<bool>();
    } else if (key == "paused" && value.is_boolean()) {
      f.paused = value.get<bool>();
    } else if (key == "gid_prefix" && value.is_string()) {
      f.gid_prefix = value.get<std::string>();
    } else if (key == "create_time_start" && value.is_number_integer()) {
      f.create_time_start = FromUnixMillis(value.get<std::int64_t>());
    } else if (key == "create_time_end" && value.is_number_integer()) {
      f.create_time_end = FromUnixMillis(value.get<std::int64_t>());
    } else if (key == "host" && value.is_string()) {
      f.host = value.get<std::string>();
    } else {
      return refuse(key);
    }
  }
  return f;
}

std::string EncodeParameters(const BulkRequest& request) {
  if (request.action != BulkAction::kRedirect) return "{}";
  return nlohmann::json{{"from", request.from}, {"to", request.to}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status DecodeParameters(std::string_view text, BulkRequest& request) {
  if (request.action != BulkAction::kRedirect) return Status::Ok();
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("from") || !j["from"].is_string() || !j.contains("to") ||
      !j["to"].is_string()) {
    return Status::InvalidArgument("job parameters: expected a redirect's from and to");
  }
  request.from = j["from"].get<std::string>();
  request.to = j["to"].get<std::string>();
  return Status::Ok();
}

std::optional<std::string> RebaseUrl(const std::string& url, const std::string& from,
                                     const std::string& to) {
  if (UrlOrigin(url) != from) return std::nullopt;
  const std::size_t scheme_end = url.find("://");
  const std::size_t authority = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const std::size_t tail = url.find_first_of("/?", authority);
  const std::string rest = tail == std::string::npos ? "" : url.substr(tail);
  // DTM's gRPC form, host:port/pkg.Service/Method, stays in that form on a plaintext host.
  if (scheme_end == std::string::npos && to.starts_with("grpc://")) {
    return to.substr(std::string_view("grpc://").size()) + rest;
  }
  return to + rest;
}

}  // namespace settle::drive
