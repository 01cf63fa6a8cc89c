#pragma once

#include <array>
#include <string_view>

namespace settle::signing {

// Why a verifier refused a signed call (request_signature.h, grpc_call_signature.h), decided
// where the failure is found. What a forger or a broken signer sends: kUnsigned, kMalformed,
// kNotCovered, kUnknownKey, kWrongAlgorithm, kDigestMismatch, kBadSignature. Two kinds are
// either a replay or a deployment's mistake: kOutsideWindow (a call replayed late, or clock
// skew between the signer and the verifier) and kAuthorityMismatch (a genuine call signed
// for another participant and replayed here, or this participant's names misconfigured).
// A kUnknownKey after a rotation, and kUnsigned while signing is being turned on, can be
// configuration too: docs/operations.md, "Signed calls to participants", tells them apart
// (a misconfiguration refuses every one of settled's calls; an attack refuses calls settled
// never made, while its own succeed).
enum class RefusalKind {
  kUnsigned,           // no signature at all (no Signature-Input nor Signature)
  kMalformed,          // a signature field that cannot be read, one of the two alone, or
                       // a covered component Settle does not sign
  kNotCovered,         // a component that must be covered is not, or the call lacks one
                       // the signature covers (Content-Digest, a dtm-* key)
  kUnknownKey,         // a keyid the verifier does not hold
  kWrongAlgorithm,     // an alg that is not the named key's
  kOutsideWindow,      // created too far from the verifier's clock, either way
  kDigestMismatch,     // Content-Digest is not the body's (the message's)
  kBadSignature,       // the signature does not verify over what arrived
  kAuthorityMismatch,  // it verifies, but for an authority the verifier does not answer to
                       // (the call's Host or X-Forwarded-Host names it)
};

// Every kind, in the order above: a metric writes each, zeros included.
inline constexpr std::array<RefusalKind, 9> kRefusalKinds = {
    RefusalKind::kUnsigned,       RefusalKind::kMalformed,      RefusalKind::kNotCovered,
    RefusalKind::kUnknownKey,     RefusalKind::kWrongAlgorithm, RefusalKind::kOutsideWindow,
    RefusalKind::kDigestMismatch, RefusalKind::kBadSignature,   RefusalKind::kAuthorityMismatch,
};

// The kind's stable lowercase name, a metric label's value and the log's word: "unsigned",
// "malformed", "not_covered", "unknown_key", "wrong_algorithm", "outside_window",
// "digest_mismatch", "bad_signature", "authority_mismatch".
std::string_view RefusalKindName(RefusalKind kind);

}  // namespace settle::signing
