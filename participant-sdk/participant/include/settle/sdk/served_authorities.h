#pragma once

#include <string>
#include <vector>

#include "settle/core/status.h"

namespace settle::sdk {

// The names a participant answers to: a signed call must have been signed for one of them
// (SignedCalls::check_authority, docs/protocol.md §4.9), whatever Host (or :authority) it
// arrives with. Each is "host:port" as the participant's callers dial it ("bank.internal:8443",
// "10.0.0.7:8081", "[fd00::7]:8081"): the authority settled signs is its branch URL's host and
// port, the port always written.
//
// `configured` (ParticipantOptions::authorities, GrpcBranchServerOptions::authorities): when
// given, they are the names, lowercased; a name without a port, with a port outside
// 1..65535, with a path, userinfo or a space is InvalidArgument naming it.
// Otherwise the address the server listens on, `listen_host` and `bound_port`, is the one name,
// and for a loopback address (127.0.0.1, ::1, localhost) "localhost:<port>" and the address's
// own form too, so that a caller on the same host may dial either. A server listening on every
// address (0.0.0.0, ::, or an empty host) has no name of its own to assume: InvalidArgument
// asking for `option_name`.
Result<std::vector<std::string>> ServedAuthorities(const std::vector<std::string>& configured,
                                                   const std::string& listen_host, int bound_port,
                                                   const std::string& option_name);

// Whether `host` (as given to Start) listens on every address: "", "0.0.0.0", "::", "[::]".
bool IsWildcardHost(const std::string& host);

}  // namespace settle::sdk
