#pragma once

#include <string>
#include <string_view>

#include "settle/core/protocol.h"
#include "settle/core/status.h"

namespace settle::sdk {

// Shared by the initiator (Msg) and the barrier (MsgBarrier), which both refuse a bad gid
// before they touch the wire or the database; public only for that (the SDK's rooms reach one
// another through their include/ folders).
//
// InvalidArgument naming the field, in the coordinator's words (docs/protocol.md §1.4), unless
// `gid` is a valid gid.
inline Status CheckGid(std::string_view gid) {
  if (IsValidGid(gid)) return Status::Ok();
  return Status::InvalidArgument("gid: must be 1 to " + std::to_string(kMaxGidLength) +
                                 " characters of [A-Za-z0-9_.:-]");
}

}  // namespace settle::sdk
