#pragma once

#include <exception>
#include <string>
#include <string_view>

#include "settle/core/status.h"
#include "settle/sdk/branch_request.h"

namespace settle::sdk {

// Runs code the service supplies (a branch handler, a workflow step, a local transaction, an
// initiator's body) so that nothing it throws unwinds through the SDK: what it threw is an
// error like any other (a branch handler's answers Internal, 500: docs/protocol.md §6.2).
//
// Returns what `call()` returns. If it throws, returns `on_throw(status)` instead, status being
// Internal "<who> threw: <what()>", or "<who> threw" for something that is no std::exception.
// `on_throw` makes the caller's answer of that Status (an HTTP reply, say); without it, the
// Status itself is returned, for a `call` returning Status or Result<T>.
template <typename Call, typename OnThrow>
auto Caught(std::string_view who, Call&& call, OnThrow&& on_throw) -> decltype(call()) {
  try {
    return call();
  } catch (const std::exception& e) {
    return on_throw(Status::Internal(std::string(who) + " threw: " + e.what()));
  } catch (...) {
    return on_throw(Status::Internal(std::string(who) + " threw"));
  }
}

template <typename Call>
auto Caught(std::string_view who, Call&& call) -> decltype(call()) {
  return Caught(who, call, [](Status status) { return status; });
}

// The same for a branch handler, whose `call` returns a BranchReply: BranchReply::Error(status)
// if it throws.
template <typename Call>
BranchReply CaughtReply(std::string_view who, Call&& call) {
  return Caught(who, call, BranchReply::Error);
}

}  // namespace settle::sdk
