#include "settle/sdk/resume_request.h"

#include <utility>

#include "query_params.h"
#include "settle/core/protocol.h"

namespace settle::sdk {

Status ParseResumeQuery(const std::multimap<std::string, std::string>& params,
                        ResumeRequest& request) {
  std::string gid;
  if (Status s = query::ReadGid(params, gid); !s.ok()) return s;
  if (Status s =
          query::ExpectTransType(params, ToString(TransType::kWorkflow), "resumes workflows");
      !s.ok()) {
    return s;
  }
  std::string branch_id;
  if (Status s = query::ReadBranchId(params, branch_id); !s.ok()) return s;
  const std::string* name = query::Param(params, "op");
  if (name == nullptr) return query::Required("op");
  if (IsBranchOpName(*name)) {
    return Status::InvalidArgument("op: names a branch op, not a workflow");
  }
  request.gid = std::move(gid);
  request.name = *name;
  return Status::Ok();
}

}  // namespace settle::sdk
