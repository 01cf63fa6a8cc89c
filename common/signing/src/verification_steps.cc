#include "verification_steps.h"

#include <algorithm>

#include "settle/core/ascii.h"
#include "structured_fields.h"

namespace settle::signing::detail {
namespace {

std::string_view TrimOws(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<std::string> FieldValue(const Fields& fields, std::string_view name) {
  std::optional<std::string> value;
  for (const auto& [field_name, field_value] : fields) {
    if (!EqualsIgnoreAsciiCase(field_name, name)) continue;
    if (value) {
      *value += ", ";
    } else {
      value.emplace();
    }
    *value += TrimOws(field_value);
  }
  return value;
}

std::string Quote(std::string_view text) {
  constexpr std::size_t kMaxQuoted = 80;
  std::string out(text.substr(0, kMaxQuoted));
  for (std::string_view word : {"FAILURE", "ONGOING", "SUCCESS"}) {
    for (std::size_t at = out.find(word); at != std::string::npos; at = out.find(word, at)) {
      std::transform(out.begin() + static_cast<std::ptrdiff_t>(at),
                     out.begin() + static_cast<std::ptrdiff_t>(at + word.size()),
                     out.begin() + static_cast<std::ptrdiff_t>(at), AsciiLower);
    }
  }
  out = SerializeString(out);
  if (text.size() > kMaxQuoted) out += "...";
  return out;
}

Verdict ReadSignature(const Fields& fields, std::string_view input_name,
                      std::string_view signature_name, ArrivedSignature* arrived) {
  const std::optional<std::string> input_field = FieldValue(fields, input_name);
  const std::optional<std::string> signature_field = FieldValue(fields, signature_name);
  if (!input_field && !signature_field) {
    return Verdict::Refuse(RefusalKind::kUnsigned, "no " + std::string(input_name));
  }
  // One without the other is a signer's (or a tamperer's) doing, not a call sent unsigned.
  if (!input_field) {
    return Verdict::Refuse(RefusalKind::kMalformed, "no " + std::string(input_name));
  }
  if (!signature_field) {
    return Verdict::Refuse(RefusalKind::kMalformed, "no " + std::string(signature_name));
  }

  Result<ParsedInput> input = ParseSignatureInput(*input_field);
  if (!input) {
    return Verdict::Refuse(RefusalKind::kMalformed, "malformed " + std::string(input_name) + ": " +
                                                        input.status().message());
  }
  Result<std::string> signature = ParseSignature(*signature_field, input->label);
  if (!signature) {
    return Verdict::Refuse(RefusalKind::kMalformed, "malformed " + std::string(signature_name) +
                                                        ": " + signature.status().message());
  }
  *arrived = ArrivedSignature{std::move(input->params), std::move(*signature)};
  return Verdict::Accept();
}

Verdict CheckCovered(const SignatureParams& params, const std::vector<std::string>& required) {
  for (const std::string& name : required) {
    if (std::find(params.components.begin(), params.components.end(), name) ==
        params.components.end()) {
      return Verdict::Refuse(RefusalKind::kNotCovered, name + " is not covered");
    }
  }
  return Verdict::Accept();
}

Verdict CheckKeyAndCreated(const SignatureParams& params, const VerifyPolicy& policy,
                           std::int64_t now_unix, const VerifyingKey** key) {
  const auto found = std::find_if(policy.keys.begin(), policy.keys.end(),
                                  [&](const VerifyingKey& k) { return k.keyid() == params.keyid; });
  if (found == policy.keys.end()) {
    return Verdict::Refuse(RefusalKind::kUnknownKey, "unknown keyid " + Quote(params.keyid));
  }
  const std::string_view key_alg = AlgorithmName(found->algorithm());
  if (!params.alg.empty() && params.alg != key_alg) {
    return Verdict::Refuse(RefusalKind::kWrongAlgorithm,
                           "alg " + Quote(params.alg) + " is not the algorithm of key " +
                               Quote(found->keyid()) + " (" + std::string(key_alg) + ")");
  }

  // created has at most 15 digits (RFC 8941), so the difference cannot overflow.
  const std::int64_t window = policy.window.count();
  const std::int64_t age = now_unix - params.created;
  if (age > window) {
    return Verdict::Refuse(RefusalKind::kOutsideWindow, "created " + std::to_string(age) +
                                                            " s before now, outside the " +
                                                            std::to_string(window) + " s window");
  }
  if (-age > window) {
    return Verdict::Refuse(RefusalKind::kOutsideWindow, "created " + std::to_string(-age) +
                                                            " s after now, outside the " +
                                                            std::to_string(window) + " s window");
  }
  *key = &*found;
  return Verdict::Accept();
}

std::optional<std::string> ForwardedAuthority(const Fields& fields, std::string_view arrived) {
  const std::optional<std::string> forwarded = FieldValue(fields, "X-Forwarded-Host");
  if (!forwarded) return std::nullopt;
  // The first proxy's, when several appended theirs.
  const std::string first(TrimOws(std::string_view(*forwarded).substr(0, forwarded->find(','))));
  if (first.empty() || AsciiLowercase(first) == AsciiLowercase(arrived)) return std::nullopt;
  return first;
}

namespace {

// Whether the base of `covered`, with "@authority" (at `authority_index`) = `authority`,
// verifies.
bool VerifiesFor(const VerifyingKey& key, std::vector<Component>& covered,
                 std::size_t authority_index, const std::string& authority,
                 const SignatureParams& params, std::string_view signature) {
  covered[authority_index].value = AsciiLowercase(authority);
  Result<std::string> base = SignatureBase(covered, params);
  return base && key.Verify(*base, signature);
}

std::string NamesOf(const std::vector<std::string>* served) {
  if (served == nullptr || served->empty()) return "none configured";
  std::string out;
  for (const std::string& name : *served) out += (out.empty() ? "" : ", ") + Quote(name);
  return out;
}

}  // namespace

Verdict CheckSignature(const VerifyingKey& key, const std::vector<Component>& covered,
                       const SignatureParams& params, std::string_view signature,
                       const Authorities& authorities) {
  Result<std::string> base = SignatureBase(covered, params);
  if (!base) {
    return Verdict::Refuse(RefusalKind::kMalformed,
                           "the signature base cannot be built: " + base.status().message());
  }
  const auto authority = std::find_if(covered.begin(), covered.end(),
                                      [](const Component& c) { return c.name == "@authority"; });
  if (authority == covered.end()) {
    if (key.Verify(*base, signature)) return Verdict::Accept();
    return Verdict::Refuse(RefusalKind::kBadSignature,
                           "signature does not verify with key " + Quote(key.keyid()));
  }

  // The authorities that pass, the arrived one first when it is among them: it is the one a
  // caller that dialed this verifier by a name it answers to has signed.
  const std::string arrived = AsciiLowercase(authorities.arrived);
  std::vector<std::string> accepted;
  if (authorities.served != nullptr) {
    for (const std::string& name : *authorities.served) accepted.push_back(AsciiLowercase(name));
  }
  const bool arrived_served =
      std::find(accepted.begin(), accepted.end(), arrived) != accepted.end();
  if (arrived_served || !authorities.check) {
    std::erase(accepted, arrived);
    accepted.insert(accepted.begin(), arrived);
  }
  std::vector<Component> candidate = covered;
  const auto index = static_cast<std::size_t>(authority - covered.begin());
  for (const std::string& name : accepted) {
    if (VerifiesFor(key, candidate, index, name, params, signature)) return Verdict::Accept();
  }

  // Sound, but for an authority this verifier does not answer to: said so, with the name it
  // was signed for, so that a replay from another participant and a missing name of this one
  // are not taken for a forger's bad signature. Whether the name came in Host or in
  // X-Forwarded-Host tells nothing: a replayer chooses both.
  const auto signed_for = [&](const std::string& name, const char* where) {
    return Verdict::Refuse(RefusalKind::kAuthorityMismatch,
                           "signed for authority " + Quote(name) + " (the call's " + where +
                               "), which is not one this participant answers to (" +
                               NamesOf(authorities.served) + ")");
  };
  if (!arrived_served && authorities.check &&
      VerifiesFor(key, candidate, index, arrived, params, signature)) {
    return signed_for(arrived, "Host");
  }
  if (authorities.forwarded &&
      std::find(accepted.begin(), accepted.end(), AsciiLowercase(*authorities.forwarded)) ==
          accepted.end() &&
      VerifiesFor(key, candidate, index, *authorities.forwarded, params, signature)) {
    return signed_for(*authorities.forwarded, "X-Forwarded-Host");
  }
  return Verdict::Refuse(RefusalKind::kBadSignature,
                         "signature does not verify with key " + Quote(key.keyid()));
}

Verdict CheckTag(const SignatureParams& params, const std::vector<std::string>& accepted) {
  if (std::find(accepted.begin(), accepted.end(), params.tag) != accepted.end()) {
    return Verdict::Accept();
  }
  std::string wanted;
  for (const std::string& tag : accepted) {
    if (tag.empty()) continue;
    wanted += (wanted.empty() ? "" : " or ") + Quote(tag);
  }
  if (params.tag.empty()) {
    return Verdict::Refuse(RefusalKind::kMalformed,
                           "the signature has no tag; this call needs " + wanted);
  }
  if (wanted.empty()) {
    return Verdict::Refuse(RefusalKind::kMalformed,
                           "the signature is tagged " + Quote(params.tag) +
                               ", which is not a signature of this call's kind");
  }
  return Verdict::Refuse(RefusalKind::kMalformed, "the signature is tagged " + Quote(params.tag) +
                                                      "; this call needs " + wanted);
}

Result<std::string> SignComponents(const SigningKey& key, const std::vector<Component>& covered,
                                   const SignatureParams& params) {
  Result<std::string> base = SignatureBase(covered, params);
  if (!base) return base.status();
  return key.Sign(*base);
}

Fields SignatureFields(std::string_view digest_name, std::string content_digest,
                       std::string_view input_name, std::string_view signature_name,
                       const SignatureParams& params, std::string_view signature) {
  const std::string label(kSignatureLabel);
  return Fields{
      {std::string(digest_name), std::move(content_digest)},
      {std::string(input_name), label + "=" + SerializeParams(params)},
      {std::string(signature_name), label + "=" + ByteSequence(signature)},
  };
}

}  // namespace settle::signing::detail
