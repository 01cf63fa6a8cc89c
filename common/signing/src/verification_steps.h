#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/status.h"
#include "settle/signing/keys.h"
#include "settle/signing/request_signature.h"
#include "settle/signing/signature_base.h"
#include "settle/signing/verdict.h"

namespace settle::signing::detail {

// The steps of making and checking a signature that its HTTP form (request_signature.h) and its
// gRPC form (grpc_call_signature.h) share; each form derives its own components between them. Every
// refusal is a Verdict whose kind is decided here, with a reason that never holds the words of a
// verdict.

using Fields = std::vector<std::pair<std::string, std::string>>;

// The value of field `name` (RFC 9421 §2.1), compared case-insensitively: its occurrences'
// values, each trimmed, joined by ", " as HTTP combines a repeated field; nullopt when absent.
std::optional<std::string> FieldValue(const Fields& fields, std::string_view name);

// Text from the call, quoted for a reason: cut short, and without the words the coordinator
// reads as a participant's verdict (a reason must not turn a refusal into one).
std::string Quote(std::string_view text);

// A signature as it arrived: its parameters and its bytes.
struct ArrivedSignature {
  SignatureParams params;
  std::string signature;
};

// Reads the fields named `input_name` and `signature_name` ("Signature-Input" and "Signature"
// over HTTP, the lowercase metadata keys over gRPC; the reasons name them so) into `*arrived`:
// kUnsigned "no <input_name>" when neither is there, kMalformed "no <name>" when one of them
// is missing and "malformed <name>: ..." when one cannot be read.
Verdict ReadSignature(const Fields& fields, std::string_view input_name,
                      std::string_view signature_name, ArrivedSignature* arrived);

// kNotCovered "<name> is not covered" for the first of `required` that `params` does not list.
Verdict CheckCovered(const SignatureParams& params, const std::vector<std::string>& required);

// Sets `*key` to the trusted key `params` names, once its alg (when given) is the key's and its
// created lies within the policy's window of `now_unix`: kUnknownKey, kWrongAlgorithm or
// kOutsideWindow otherwise.
Verdict CheckKeyAndCreated(const SignatureParams& params, const VerifyPolicy& policy,
                           std::int64_t now_unix, const VerifyingKey** key);

// The authority a proxy says the call was sent to: the first X-Forwarded-Host (any case; gRPC
// metadata too) of `fields`, when it differs from `arrived`; nullopt otherwise.
std::optional<std::string> ForwardedAuthority(const Fields& fields, std::string_view arrived);

// The authorities a covered "@authority" may have been signed for, as CheckSignature tries them.
struct Authorities {
  // The names the verifier answers to (VerifyPolicy::authorities); one of them must be signed.
  const std::vector<std::string>* served = nullptr;
  // Without VerifyPolicy::check_authority, the authority the call arrived with passes too.
  bool check = true;
  // The Host (:authority) the call arrived with, and the X-Forwarded-Host a proxy (or anyone)
  // added (ForwardedAuthority): never accepted when checked, only named in a refusal.
  std::string arrived;
  std::optional<std::string> forwarded;
};

// Whether `signature` is `key`'s over the base of `covered` and `params`. When "@authority"
// is covered, its value is each of `authorities`' served names in turn (the arrived one first
// when it is served), and the arrived one too when not checked: accepted when one verifies.
// Refused with kMalformed when the base cannot be built; kAuthorityMismatch when it verifies
// only for the arrived or forwarded authority, which the verifier does not answer to (a call
// signed for another participant, or the verifier's names misconfigured: the reason names the
// authority it was signed for and where it was read); kBadSignature otherwise.
Verdict CheckSignature(const VerifyingKey& key, const std::vector<Component>& covered,
                       const SignatureParams& params, std::string_view signature,
                       const Authorities& authorities);

// kMalformed unless the signature's tag is one of `accepted` ("" for none): a signature made
// for one purpose (settled's countersignature of a Try, its own calls) is not taken for
// another.
Verdict CheckTag(const SignatureParams& params, const std::vector<std::string>& accepted);

// The signature of `key` over the base of `covered` and `params`.
Result<std::string> SignComponents(const SigningKey& key, const std::vector<Component>& covered,
                                   const SignatureParams& params);

// The fields a signer adds: `digest_name` = `content_digest`, Signature-Input and Signature
// (under the names given) for `signature` over `params`, labelled kSignatureLabel.
Fields SignatureFields(std::string_view digest_name, std::string content_digest,
                       std::string_view input_name, std::string_view signature_name,
                       const SignatureParams& params, std::string_view signature);

}  // namespace settle::signing::detail
