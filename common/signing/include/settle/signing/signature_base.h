#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/status.h"

namespace settle::signing {

// One covered component of RFC 9421 (§2): its identifier as the signature lists it ("@method",
// "@authority", "@path", "@query", or a lowercase field name such as "content-digest" or
// "dtm-gid") and its value as the signer and the verifier both derive it.
struct Component {
  std::string name;
  std::string value;
};

// The signature's parameters (RFC 9421 §2.3): the covered components in order, created (Unix
// seconds), keyid, alg and tag; serialized in that order, e.g.
//   ("@method" "@path");created=1618884473;keyid="test-key-ed25519";alg="ed25519"
// An empty alg or tag is left out. The tag says what a signature is for (RFC 9421 §2.3):
// settled's countersignature of a registered Try carries kRegisteredTryTag
// (request_signature.h), its own calls none.
struct SignatureParams {
  std::vector<std::string> components;
  std::int64_t created = 0;
  std::string keyid;
  std::string alg;
  std::string tag;
};

// The serialized inner list with its parameters, as Signature-Input carries it after "label=".
std::string SerializeParams(const SignatureParams& params);

// The signature base of RFC 9421 §2.5: one line `"name": value` per covered component in
// order, then `"@signature-params": <SerializeParams>`, lines joined by "\n", no newline at
// the end. InvalidArgument when a component's value holds a newline or another control
// character (it could forge a line), or when `covered` does not list params.components in
// order.
Result<std::string> SignatureBase(const std::vector<Component>& covered,
                                  const SignatureParams& params);

// A Signature-Input field value with one member, `label=(...);created=...;keyid="...";alg="..."`
// (RFC 8941 dictionary syntax as RFC 9421 uses it): the label and its parameters.
// InvalidArgument naming what is malformed, unknown parameters included (so that nothing signed
// is silently ignored); a field with several members is refused too.
struct ParsedInput {
  std::string label;
  SignatureParams params;
};
Result<ParsedInput> ParseSignatureInput(std::string_view field);

// The signature bytes of member `label` of a Signature field value (`label=:<base64>:`), decoded.
// InvalidArgument when it is missing, not a byte sequence, or the field has other members.
Result<std::string> ParseSignature(std::string_view field, std::string_view label);

// `bytes` as RFC 8941's byte sequence (":<base64>:"), as Signature carries it.
std::string ByteSequence(std::string_view bytes);

}  // namespace settle::signing
