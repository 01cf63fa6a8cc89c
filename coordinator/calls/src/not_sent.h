#pragma once

#include <string>

#include "settle/engine/branch_call.h"

namespace settle::calls {

// Why settled does not send `call` at all, or empty when it may go (docs/protocol.md §4.1,
// §10.4): its URL's query names one of the protocol's keys, or one of its branch headers is a
// field settled sets itself (protocol_keys.h), or, to a gRPC method, one that gRPC sets itself
// or that cannot travel as metadata. Such a call would carry a second value for a protocol key,
// one a client chose, under settled's signature. Prepare, submit and registerBranch refuse all of
// these; a row stored before they did is refused here, by the caller: its outcome is an error
// ("not sent: ..."), retried and flagged stuck like any failed call. The call passes no host
// gate, since it says nothing about the host.
std::string WhyNotSent(const engine::BranchCall& call);

}  // namespace settle::calls
