#pragma once

#include <string>

#include "settle/core/status.h"
#include "settle/storage/records.h"

namespace settle::drive {

// What an operation on an unknown gid answers (NotFound), the same wherever it is refused.
inline Status NoSuchGid(const std::string& gid) {
  return Status::NotFound("no transaction with gid " + gid);
}

// What a requester that may not touch the transaction gets when it repeats the request that
// created it (a prepare, a saga's submit): the gid is taken, and nothing more is said of it.
inline Status TakenByAnother(const std::string& gid) {
  return Status::Conflict("gid " + gid + " already exists");
}

inline Status WrongType(const storage::GlobalRecord& g, TransType wanted) {
  return Status::Conflict("gid " + g.gid + " is a " + std::string(ToString(g.trans_type)) +
                          " transaction, not " + std::string(ToString(wanted)));
}

inline Status StatusForbids(const storage::GlobalRecord& g) {
  return Status::Conflict("gid " + g.gid + " is " + std::string(ToString(g.status)));
}

}  // namespace settle::drive
