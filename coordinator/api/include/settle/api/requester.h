#pragma once

#include "settle/api/access_tokens.h"
#include "settle/engine/ownership.h"

namespace settle::api {

// Who asks, as the coordinator judges ownership (engine/ownership.h, docs/protocol.md §1.6),
// for both front doors: with authentication on (`authentication_enabled`: tokens or client
// certificates), the caller's name, and a client-level caller sees and acts on its own only
// (read tokens are operators': they see everything, as admins do). With authentication off
// every request is one anonymous admin: it sees everything and creates what belongs to nobody,
// so that turning authentication on later leaves those transactions open to every client.
engine::Requester RequesterOf(const Caller& caller, bool authentication_enabled);

}  // namespace settle::api
