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

// The tag of settled's countersignature of a registered Try (docs/protocol.md §4.9): what
// registerBranch answers an initiator with, for it to send with its Try. settled's own calls
// carry no tag, so neither kind of signature passes for the other.
inline constexpr std::string_view kRegisteredTryTag = "settle-try";

// The fields to add to the request: Content-Digest (RFC 9530, SHA-256 of the body),
// Signature-Input and Signature, covering "@method" "@authority" "@path" "@query"
// "content-digest" with created = `created_unix`, keyid, alg and `tag` (none when empty).
// Without `cover_authority`, "@authority" is left out: for participants that verify with
// check_authority off.
Result<std::vector<std::pair<std::string, std::string>>> SignRequest(const SignedRequest& request,
                                                                     const SigningKey& key,
                                                                     std::int64_t created_unix,
                                                                     bool cover_authority = true,
                                                                     std::string_view tag = {});

// What a verifier accepts.
struct VerifyPolicy {
  // The keys it trusts; a signature names one by keyid (several: rotation).
  std::vector<VerifyingKey> keys;
  // |now - created| must be at most this.
  std::chrono::seconds window{300};
  // Whether "@authority" must be covered and be one of `authorities`. Off, a covered
  // "@authority" may also be the one the call arrived with.
  bool check_authority = true;
  // The names the verifier answers to, "host:port" as its callers dial it (compared without
  // case): a signature must be made for one of them. Never the call's own Host (or
  // :authority), which whoever sends the call chooses: a call signed for another participant
  // is refused (kAuthorityMismatch) wherever it is replayed.
  std::vector<std::string> authorities;
  // The tags a signature may carry, "" for none: {""} for settled's own calls,
  // {kRegisteredTryTag} for a Try that must come with settled's countersignature. Another is
  // kMalformed.
  std::vector<std::string> tags = {""};
};

// Checks `request`, which arrived with `fields` (name, value; names compared
// case-insensitively), against `policy` at `now_unix`. Accepted, or refused with the kind and
// the reason:
//   kUnsigned         no Signature-Input nor Signature;
//   kMalformed        one of them alone, one that cannot be read, a covered component
//                     Settle does not sign, or a tag that is not one of the policy's;
//   kNotCovered       a component that must be covered is not ("@method", "@path", "@query",
//                     "content-digest", and "@authority" unless check_authority is off), or no
//                     Content-Digest field;
//   kUnknownKey, kWrongAlgorithm (an alg that is not the key's), kOutsideWindow (created);
//   kDigestMismatch   a Content-Digest that is not the body's;
//   kAuthorityMismatch  a signature that verifies, but for an authority that is not one of the
//                     policy's: the call's Host or X-Forwarded-Host (a call signed for
//                     another participant, or the policy's authorities misconfigured);
//   kBadSignature     any other signature that does not verify.
// `request.authority` is the Host the call arrived with: only named in a refusal (and let
// through without check_authority), never trusted.
Verdict VerifyRequest(const SignedRequest& request,
                      const std::vector<std::pair<std::string, std::string>>& fields,
                      const VerifyPolicy& policy, std::int64_t now_unix);

}  // namespace settle::signing
