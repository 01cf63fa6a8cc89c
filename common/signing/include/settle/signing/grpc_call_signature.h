#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/status.h"
#include "settle/signing/keys.h"
#include "settle/signing/request_signature.h"
#include "settle/signing/verdict.h"

namespace settle::signing {

// What Settle signs of a branch call over gRPC (docs/protocol.md §4.9): the same signature as
// over HTTP (request_signature.h), carried as metadata, over the components a gRPC call has.
struct SignedGrpcCall {
  // The call's :authority: "host:port" as the caller dialed it (lowercased for signing).
  std::string authority;
  // The method as gRPC names it on the wire, "/bank.Bank/TransOut": the call's "@path".
  std::string method;
  // The call's metadata, keys lowercase. Every dtm-* key is covered; a verifier also reads
  // content-digest, signature-input and signature here.
  std::vector<std::pair<std::string, std::string>> metadata;
  // The serialized request message, whose digest is covered.
  std::string message;
};

// The metadata to add to the call: content-digest (RFC 9530, SHA-256 of the message's bytes),
// signature-input and signature, labelled kSignatureLabel, covering in this order
//   "@method" (always POST: every gRPC call is one), "@authority", "@path",
//   each dtm-* key of call.metadata in the order it first appears, "content-digest"
// with created = `created_unix`, keyid, alg and `tag` (none when empty). Without
// `cover_authority`, "@authority" is left out (the verifier has check_authority off).
// InvalidArgument when a dtm-* value holds a control character.
Result<std::vector<std::pair<std::string, std::string>>> SignGrpcCall(const SignedGrpcCall& call,
                                                                      const SigningKey& key,
                                                                      std::int64_t created_unix,
                                                                      bool cover_authority = true,
                                                                      std::string_view tag = {});

// Checks `call` against `policy` at `now_unix`: accepted, or refused with the kind and the
// reason:
//   kUnsigned         no signature-input nor signature metadata;
//   kMalformed        one of them alone, one that cannot be read, a covered component
//                     Settle does not sign (anything but those below and dtm-* keys), or a
//                     tag that is not one of the policy's;
//   kNotCovered       a component that must be covered is not ("@method", "@path", "dtm-gid",
//                     "dtm-trans_type", "dtm-branch_id", "dtm-op", every other dtm-* key the
//                     call carries, "content-digest", and "@authority" unless check_authority
//                     is off), a covered dtm-* key the call does not carry, or no
//                     content-digest;
//   kUnknownKey, kWrongAlgorithm (an alg that is not the key's), kOutsideWindow (created);
//   kDigestMismatch   a content-digest that is not the message's;
//   kAuthorityMismatch  a signature that verifies, but for an authority that is not one of the
//                     policy's: the call's :authority or x-forwarded-host (a call signed for
//                     another participant, or the policy's authorities misconfigured);
//   kBadSignature     any other signature that does not verify (another method, authority,
//                     dtm-* value, or message).
// `call.authority` is the :authority the call arrived with: only named in a refusal (and let
// through without check_authority), never trusted.
Verdict VerifyGrpcCall(const SignedGrpcCall& call, const VerifyPolicy& policy,
                       std::int64_t now_unix);

}  // namespace settle::signing
