#pragma once

#include <functional>
#include <map>
#include <string>

#include "settle/core/status.h"
#include "settle/core/trace_context.h"
#include "settle/sdk/branch_request.h"

namespace settle::sdk {

// A workflow's resume, as settled calls the workflow's query_prepared while it is unfinished
// (docs/protocol.md §3.16): `?gid=G&trans_type=workflow&branch_id=00&op=<the workflow's name>`,
// with the workflow's input as the body.
struct ResumeRequest {
  std::string path;  // the URL path the call arrived on
  std::string gid;
  std::string name;   // the workflow's name: the call's op
  std::string input;  // the workflow's input, byte for byte
  std::multimap<std::string, std::string> headers;
  TraceContext trace;  // as BranchRequest::trace
};

// Reads gid, trans_type (workflow only), branch_id and op (the workflow's name) from the query.
// InvalidArgument naming the parameter when one is missing or invalid, and for an op that is
// one of the protocol's in any case (try, Confirm, ...: IsBranchOpName, settle/core/protocol.h):
// no workflow is named so (settled refuses the name), so such a call is no resume.
Status ParseResumeQuery(const std::multimap<std::string, std::string>& params,
                        ResumeRequest& request);

// What answers a resume (Participant::OnResume; Workflows::Resumer makes one), as a branch
// handler answers its call.
using ResumeHandler = std::function<BranchReply(const ResumeRequest&)>;

}  // namespace settle::sdk
