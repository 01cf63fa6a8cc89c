#include "settle/engine/request_rules.h"

#include "settle/core/grpc_target.h"
#include "settle/core/header_syntax.h"
#include "settle/core/protocol_keys.h"
#include "settle/core/url.h"

namespace settle::engine {

Status FieldError(std::string_view path, std::string_view problem) {
  std::string message(path);
  message += ": ";
  message += problem;
  return Status::InvalidArgument(std::move(message));
}

std::string IndexPath(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

Status CheckGid(const std::string& gid) {
  if (gid.empty()) return FieldError("gid", "required");
  if (!IsValidGid(gid)) {
    return FieldError(
        "gid", "must be 1 to " + std::to_string(kMaxGidLength) + " characters of [A-Za-z0-9_.:-]");
  }
  return Status::Ok();
}

Status CheckStoredUrl(std::string_view path, const std::string& url, bool required) {
  if (url.empty()) return required ? FieldError(path, "required") : Status::Ok();
  if (LooksLikeGrpcTarget(url)) {
    if (auto target = ParseGrpcTarget(url); !target) {
      return FieldError(path, target.status().message());
    }
    return Status::Ok();
  }
  if (auto parsed = ParseUrl(url); !parsed) return FieldError(path, parsed.status().message());
  return Status::Ok();
}

Status CheckUrl(std::string_view path, const std::string& url, bool required) {
  if (Status s = CheckStoredUrl(path, url, required); !s.ok()) return s;
  if (const auto key = ProtocolKeyInQuery(url)) {
    return FieldError(path, "the query names \"" + std::string(*key) +
                                "\", which settled sets itself (protocol.md §4.1)");
  }
  return Status::Ok();
}

Status CheckReason(std::string_view path, const std::string& text) {
  if (text.size() <= kMaxReasonLength) return Status::Ok();
  return FieldError(path, "longer than " + std::to_string(kMaxReasonLength) + " bytes");
}

Status CheckTopic(std::string_view path, const std::string& topic) {
  if (topic.empty()) return FieldError(path, "required");
  if (!IsValidTopic(topic)) {
    return FieldError(path, "must be 1 to 128 characters of [A-Za-z0-9_.:-]");
  }
  return Status::Ok();
}

Status CheckStepCounts(std::string_view kind, std::size_t steps, std::size_t payloads) {
  if (steps == 0) return FieldError("steps", std::string(kind) + " needs at least one step");
  if (steps > kMaxSagaSteps) {
    return FieldError("steps", "at most " + std::to_string(kMaxSagaSteps) + " steps");
  }
  if (payloads != steps) {
    return FieldError("payloads", std::to_string(payloads) + " payloads for " +
                                      std::to_string(steps) + " steps; expected one per step");
  }
  return Status::Ok();
}

Status CheckOptions(const RequestOptions& options) {
  for (const auto& [name, value] : options.branch_headers) {
    if (!IsValidHeaderName(name)) {
      return FieldError("branch_headers", "\"" + name + "\" is not a header name");
    }
    if (!IsValidHeaderValue(value)) {
      return FieldError("branch_headers." + name, "must not contain control characters");
    }
    if (IsReservedBranchHeader(name)) {
      return FieldError("branch_headers." + name,
                        "a header settled sets itself; a transaction may not set it "
                        "(protocol.md §3.7)");
    }
  }
  return Status::Ok();
}

Status CheckWaitCeiling(const RequestOptions& options, Duration max_wait) {
  if (max_wait.count() <= 0) return Status::Ok();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(max_wait).count();
  const auto check = [&](std::string_view path, const std::optional<Duration>& value) {
    if (!value || *value <= max_wait) return Status::Ok();
    return FieldError(path, "at most " + std::to_string(seconds) +
                                " seconds on this server (--max-timeout-to-fail)");
  };
  if (Status s = check("timeout_to_fail", options.timeout_to_fail); !s.ok()) return s;
  return check("custom_data.delay", options.delay);
}

Status CheckCallCeiling(const RequestOptions& options, Duration max_call) {
  if (max_call.count() <= 0 || !options.request_timeout || *options.request_timeout <= max_call) {
    return Status::Ok();
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(max_call).count();
  return FieldError("request_timeout", "at most " + std::to_string(seconds) +
                                           " seconds on this server (--max-branch-timeout)");
}

Status CheckGrpcHeaders(const std::map<std::string, std::string>& branch_headers,
                        const std::vector<std::string>& urls) {
  bool any_grpc = false;
  for (const std::string& url : urls) {
    if (!url.empty() && !url.starts_with(kTopicPrefix) && LooksLikeGrpcTarget(url)) any_grpc = true;
  }
  if (!any_grpc) return Status::Ok();
  for (const auto& [name, value] : branch_headers) {
    if (!IsGrpcMetadataHeader(name, value)) {
      return FieldError("branch_headers." + name,
                        "cannot be sent as gRPC metadata to this transaction's gRPC participants "
                        "(a name of [0-9A-Za-z-_.], not grpc-* or *-bin, and a printable ASCII "
                        "value)");
    }
    if (IsReservedGrpcBranchHeader(name)) {
      return FieldError("branch_headers." + name,
                        "metadata gRPC or settled sets itself; a transaction with gRPC "
                        "participants may not set it (protocol.md §10.4)");
    }
  }
  return Status::Ok();
}

}  // namespace settle::engine
