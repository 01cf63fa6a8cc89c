#include "verification_steps.h"

#include <algorithm>

#include "structured_fields.h"

namespace settle::signing::detail {
namespace {

char ToLowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
char ToUpperAscii(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ToLowerAscii(x) == ToLowerAscii(y);
         });
}

std::string_view TrimOws(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), ToLowerAscii);
  return out;
}

std::string Uppercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), ToUpperAscii);
  return out;
}

std::optional<std::string> FieldValue(const Fields& fields, std::string_view name) {
  std::optional<std::string> value;
  for (const auto& [field_name, field_value] : fields) {
    if (!EqualsIgnoreCase(field_name, name)) continue;
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
                     out.begin() + static_cast<std::ptrdiff_t>(at), ToLowerAscii);
    }
  }
  out = SerializeString(out);
  if (text.size() > kMaxQuoted) out += "...";
  return out;
}

Result<ArrivedSignature> ReadSignature(const Fields& fields, std::string_view input_name,
                                       std::string_view signature_name) {
  const std::optional<std::string> input_field = FieldValue(fields, input_name);
  if (!input_field) return Status::InvalidArgument("no " + std::string(input_name));
  const std::optional<std::string> signature_field = FieldValue(fields, signature_name);
  if (!signature_field) return Status::InvalidArgument("no " + std::string(signature_name));

  Result<ParsedInput> input = ParseSignatureInput(*input_field);
  if (!input) {
    return Status::InvalidArgument("malformed " + std::string(input_name) + ": " +
                                   input.status().message());
  }
  Result<std::string> signature = ParseSignature(*signature_field, input->label);
  if (!signature) {
    return Status::InvalidArgument("malformed " + std::string(signature_name) + ": " +
                                   signature.status().message());
  }
  return ArrivedSignature{std::move(input->params), std::move(*signature)};
}

Status CheckCovered(const SignatureParams& params, const std::vector<std::string>& required) {
  for (const std::string& name : required) {
    if (std::find(params.components.begin(), params.components.end(), name) ==
        params.components.end()) {
      return Status::InvalidArgument(name + " is not covered");
    }
  }
  return Status::Ok();
}

Result<const VerifyingKey*> CheckKeyAndCreated(const SignatureParams& params,
                                               const VerifyPolicy& policy, std::int64_t now_unix) {
  const auto key = std::find_if(policy.keys.begin(), policy.keys.end(),
                                [&](const VerifyingKey& k) { return k.keyid() == params.keyid; });
  if (key == policy.keys.end()) {
    return Status::InvalidArgument("unknown keyid " + Quote(params.keyid));
  }
  const std::string_view key_alg = AlgorithmName(key->algorithm());
  if (!params.alg.empty() && params.alg != key_alg) {
    return Status::InvalidArgument("alg " + Quote(params.alg) + " is not the algorithm of key " +
                                   Quote(key->keyid()) + " (" + std::string(key_alg) + ")");
  }

  // created has at most 15 digits (RFC 8941), so the difference cannot overflow.
  const std::int64_t window = policy.window.count();
  const std::int64_t age = now_unix - params.created;
  if (age > window) {
    return Status::InvalidArgument("created " + std::to_string(age) +
                                   " s before now, outside the " + std::to_string(window) +
                                   " s window");
  }
  if (-age > window) {
    return Status::InvalidArgument("created " + std::to_string(-age) +
                                   " s after now, outside the " + std::to_string(window) +
                                   " s window");
  }
  return &*key;
}

Status CheckSignature(const VerifyingKey& key, const std::vector<Component>& covered,
                      const SignatureParams& params, std::string_view signature) {
  Result<std::string> base = SignatureBase(covered, params);
  if (!base) {
    return Status::InvalidArgument("the signature base cannot be built: " +
                                   base.status().message());
  }
  if (!key.Verify(*base, signature)) {
    return Status::InvalidArgument("signature does not verify with key " + Quote(key.keyid()));
  }
  return Status::Ok();
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
