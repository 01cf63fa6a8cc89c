#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/status.h"
#include "settle/engine/requests.h"

// Which members of a request settle does not know (docs/protocol.md §1.5). A front door lists
// what it read nowhere (UnreadFields); of those, the members DTM's client SDKs send are known
// (settle serves those SDKs unchanged, and some send members it has no use for: protocol,
// retry_count, a TCC registration's status and try, ...), and every other one is unknown: a
// misspelled option ("wait_resutl") that would otherwise be silently not applied. Unknown
// members are named in the answer and the log, or refused under --strict-requests.
namespace settle::engine {

// Unknown members named per request, at most; the rest are counted ("and 3 more").
inline constexpr std::size_t kMaxNamedUnknownFields = 16;
// A named member's path is cut to this many bytes.
inline constexpr std::size_t kMaxUnknownFieldPath = 64;

// Whether `path` ("retry_count", "steps[3].data") is one of the members DTM's SDKs send: the
// checked-in list in request_fields.cc, with an array's index left out for the lookup.
bool IsDtmClientField(std::string_view path);

// The members of `unread` that are not DTM's, in order, each made safe to show in a header, a
// log line or a message: a byte outside printable ASCII, and '%', ',', '"' and '\\', is
// written %XX, and a path longer than kMaxUnknownFieldPath is cut (ending in "...").
std::vector<std::string> UnknownFields(const UnreadFields& unread);

// "a, b, c" for the answer's Settle-Ignored-Fields header: at most kMaxNamedUnknownFields,
// then "and N more".
std::string ListOfFields(const std::vector<std::string>& unknown);

// What --strict-requests answers for the first unknown member: InvalidArgument
// "wait_resutl: unknown field ...".
Status RefuseUnknownField(const std::string& field);

}  // namespace settle::engine
