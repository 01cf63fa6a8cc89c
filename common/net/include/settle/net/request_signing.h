#pragma once

#include <cstdint>
#include <string_view>

#include "settle/core/status.h"
#include "settle/net/client.h"
#include "settle/signing/keys.h"

namespace settle::net {

// Signs `request` as it will go on the wire (RFC 9421; docs/protocol.md §4.9): its method, the
// URL's host:port (a Host header of the request's own is removed, so that the Host sent is the
// one signed), its target with non-ASCII bytes percent-encoded as the request line writes them,
// and its body's digest.
// Adds Content-Digest, Signature-Input and Signature, replacing fields of those names.
// Without `cover_authority` the signature leaves the Host out (signing::SignRequest); a `tag`
// says what the signature is for (signing::kRegisteredTryTag; empty: none).
Status SignRequest(ClientRequest& request, const signing::SigningKey& key,
                   std::int64_t created_unix, bool cover_authority = true,
                   std::string_view tag = {});

}  // namespace settle::net
