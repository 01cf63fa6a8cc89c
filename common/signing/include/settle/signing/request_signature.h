#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/status.h"
#include "settle/signing/keys.h"

namespace settle::signing {

// What Settle signs of a branch call over HTTP (docs/protocol.md, "Signed branch calls"): the
// derived components of RFC 9421 §2.2 and the body's digest.
struct SignedRequest {
  std::string method;     // "POST", "GET"
  std::string authority;  // "host:port" as the Host field carries it (lowercased for signing)
  std::string path;       // "/api/TransOut", without the query
  std::string query;      // "gid=g1&trans_type=saga&..." without "?"; empty: none
  std::string body;
};

// The label of Settle's signatures in Signature-Input and Signature.
inline constexpr std::string_view kSignatureLabel = "settle";

// The fields to add to the request: Content-Digest (RFC 9530, SHA-256 of the body),
// Signature-Input and Signature, covering "@method" "@authority" "@path" "@query"
// "content-digest" with created = `created_unix`, keyid and alg. Without `cover_authority`,
// "@authority" is left out: for participants behind a proxy that rewrites Host, which verify
// with check_authority off.
Result<std::vector<std::pair<std::string, std::string>>> SignRequest(const SignedRequest& request,
                                                                     const SigningKey& key,
                                                                     std::int64_t created_unix,
                                                                     bool cover_authority = true);

// What a verifier accepts.
struct VerifyPolicy {
  // The keys it trusts; a signature names one by keyid (several: rotation).
  std::vector<VerifyingKey> keys;
  // |now - created| must be at most this.
  std::chrono::seconds window{300};
  // Whether "@authority" must be covered and match; off behind a proxy that rewrites Host.
  bool check_authority = true;
};

// Checks `request`, which arrived with `fields` (name, value; names compared
// case-insensitively), against `policy` at `now_unix`. OK, or InvalidArgument with the reason,
// one of: no Signature-Input or Signature; a malformed one; a component that must be covered
// and is not ("@method", "@path", "@query", "content-digest", and "@authority" unless
// check_authority is off); an unknown keyid; an alg that is not the key's; created outside the
// window; a Content-Digest that is not the body's; a signature that does not verify. A reason
// never contains the words of a verdict (FAILURE, ONGOING, SUCCESS).
Status VerifyRequest(const SignedRequest& request,
                     const std::vector<std::pair<std::string, std::string>>& fields,
                     const VerifyPolicy& policy, std::int64_t now_unix);

}  // namespace settle::signing
