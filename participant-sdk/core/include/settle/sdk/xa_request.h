#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "settle/core/status.h"
#include "settle/core/trace_context.h"

namespace settle::sdk {

// The three calls an XA branch URL receives (DTM's protocol): the initiator's action, which
// runs and prepares the local transaction, and the coordinator's phase 2.
enum class XaOp { kAction, kCommit, kRollback };

std::string_view ToString(XaOp op);
std::optional<XaOp> ParseXaOp(std::string_view s);

// One call of an XA branch URL.
//   action:   POST <url>?gid=g&trans_type=xa&branch_id=01&op=action&phase2_url=<url> (by Xa)
//   commit:   <phase2_url>?gid=g&trans_type=xa&branch_id=01&op=commit   (by the coordinator)
//   rollback: <phase2_url>?gid=g&trans_type=xa&branch_id=01&op=rollback (by the coordinator)
struct XaRequest {
  std::string path;  // the URL path the call arrived on
  std::string gid;
  std::string branch_id;
  XaOp op = XaOp::kAction;
  std::string phase2_url;  // action only: what the participant registers
  std::string body;        // the branch's data, byte for byte
  std::multimap<std::string, std::string> headers;
  // The call's W3C trace context, as BranchRequest::trace: the initiator's for an action, a
  // span of settled's for commit and rollback; empty when the call carried none or an invalid
  // one.
  TraceContext trace;
};

// Reads gid, trans_type (which must be "xa"), branch_id, op and, for an action, phase2_url (an
// http:// or https:// URL) from the query parameters. InvalidArgument naming the parameter
// when one is missing or invalid.
Status ParseXaQuery(const std::multimap<std::string, std::string>& params, XaRequest& request);

}  // namespace settle::sdk
