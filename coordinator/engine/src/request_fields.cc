#include "settle/engine/request_fields.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "settle/engine/request_rules.h"

namespace settle::engine {
namespace {

// The members DTM's client SDKs send over HTTP, on every route (Go's dtmcli and workflow,
// dtmcli-py, dtmcli-node, dtmcli-java, client-csharp, dtmcli-php, as read in 2026): whatever
// settle reads of them is read, and the rest are known, not unknown. A step's members are
// listed as "steps[].name". Sorted, for the binary search.
constexpr std::array<std::string_view, 30> kDtmClientFields = {
    "branch_headers",
    "branch_id",
    "cancel",
    "concurrent",
    "confirm",
    "custom_data",
    "data",
    "gid",
    "op",  // a workflow's registration
    "passthrough_headers",
    "payloads",
    "protocol",
    "query_prepared",
    "req_extra",  // a workflow's submit
    "request_timeout",
    "retry_count",
    "retry_interval",
    "retry_limit",
    "rollback_reason",
    "status",  // a TCC registration's "prepared" (Python, Node, Java, PHP)
    "steps",
    "steps[].action",
    "steps[].compensate",
    "steps[].data",  // DTM's server reads it
    "subType",       // Java's Jackson type tag
    "timeout_to_fail",
    "trans_type",
    "try",  // Node's and PHP's TCC registration
    "url",
    "wait_result",
};
static_assert(std::is_sorted(kDtmClientFields.begin(), kDtmClientFields.end()));

// "steps[12].action" -> "steps[].action".
std::string WithoutIndexes(std::string_view path) {
  std::string out;
  bool in_index = false;
  for (char c : path) {
    if (c == '[') {
      in_index = true;
      out += c;
    } else if (c == ']') {
      in_index = false;
      out += c;
    } else if (!in_index) {
      out += c;
    }
  }
  return out;
}

bool NeedsEscape(unsigned char c) {
  return c < 0x21 || c > 0x7e || c == '%' || c == ',' || c == '"' || c == '\\';
}

std::string Shown(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (out.size() >= kMaxUnknownFieldPath) {
      out += "...";
      break;
    }
    if (!NeedsEscape(c)) {
      out += static_cast<char>(c);
      continue;
    }
    char escaped[4];
    std::snprintf(escaped, sizeof escaped, "%%%02X", c);
    out += escaped;
  }
  return out;
}

}  // namespace

bool IsDtmClientField(std::string_view path) {
  const std::string plain = WithoutIndexes(path);
  return std::binary_search(kDtmClientFields.begin(), kDtmClientFields.end(),
                            std::string_view(plain));
}

std::vector<std::string> UnknownFields(const UnreadFields& unread) {
  std::vector<std::string> unknown;
  for (const std::string& path : unread) {
    if (!IsDtmClientField(path)) unknown.push_back(Shown(path));
  }
  return unknown;
}

std::string ListOfFields(const std::vector<std::string>& unknown) {
  std::string list;
  const std::size_t named = std::min(unknown.size(), kMaxNamedUnknownFields);
  for (std::size_t i = 0; i < named; ++i) {
    if (i > 0) list += ", ";
    list += unknown[i];
  }
  if (unknown.size() > named) list += ", and " + std::to_string(unknown.size() - named) + " more";
  return list;
}

Status RefuseUnknownField(const std::string& field) {
  return FieldError(field,
                    "unknown field (this coordinator refuses members it does not know: "
                    "--strict-requests); check its spelling against docs/protocol.md");
}

}  // namespace settle::engine
