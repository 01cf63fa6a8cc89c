#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/status.h"
#include "settle/signing/keys.h"
#include "settle/signing/verdict.h"

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
// case-insensitively), against `policy` at `now_unix`. Accepted, or refused with the kind and
// the reason:
//   kUnsigned         no Signature-Input nor Signature;
//   kMalformed        one of them alone, one that cannot be read, or a covered component
//                     Settle does not sign;
//   kNotCovered       a component that must be covered is not ("@method", "@path", "@query",
//                     "content-digest", and "@authority" unless check_authority is off), or no
//                     Content-Digest field;
//   kUnknownKey, kWrongAlgorithm (an alg that is not the key's), kOutsideWindow (created);
//   kDigestMismatch   a Content-Digest that is not the body's;
//   kAuthorityMismatch  a signature that verifies only with the X-Forwarded-Host a proxy sent
//                     as "@authority" (the proxy rewrote Host);
//   kBadSignature     any other signature that does not verify.
Verdict VerifyRequest(const SignedRequest& request,
                      const std::vector<std::pair<std::string, std::string>>& fields,
                      const VerifyPolicy& policy, std::int64_t now_unix);

}  // namespace settle::signing
