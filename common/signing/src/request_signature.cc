#include "settle/signing/request_signature.h"

#include <algorithm>
#include <optional>

#include "settle/signing/content_digest.h"
#include "settle/signing/signature_base.h"
#include "structured_fields.h"

namespace settle::signing {
namespace {

constexpr std::string_view kMethod = "@method";
constexpr std::string_view kAuthority = "@authority";
constexpr std::string_view kPath = "@path";
constexpr std::string_view kQuery = "@query";
constexpr std::string_view kContentDigest = "content-digest";

char ToLowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
char ToUpperAscii(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

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

// The value of field `name` (RFC 9421 §2.1): its occurrences' values, each trimmed, joined by
// ", " as HTTP combines a repeated field; nullopt when it is absent.
std::optional<std::string> FieldValue(
    const std::vector<std::pair<std::string, std::string>>& fields, std::string_view name) {
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

// Text from the request, quoted for a reason: cut short, and without the words the
// coordinator reads as a participant's verdict (a reason must not turn a refusal into one).
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
  out = detail::SerializeString(out);
  if (text.size() > kMaxQuoted) out += "...";
  return out;
}

// The value of one of the components Settle signs, as both sides derive it from the request;
// nullopt for a component Settle does not sign. `content_digest` is the Content-Digest field.
std::optional<std::string> ComponentValue(std::string_view name, const SignedRequest& request,
                                          const std::string& content_digest) {
  if (name == kMethod) return Uppercase(request.method);
  if (name == kAuthority) return Lowercase(request.authority);
  if (name == kPath) return request.path.empty() ? std::string("/") : request.path;
  // RFC 9421 §2.2.7: "?" and the query; "?" alone when there is none.
  if (name == kQuery) return "?" + request.query;
  if (name == kContentDigest) return content_digest;
  return std::nullopt;
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> SignRequest(const SignedRequest& request,
                                                                     const SigningKey& key,
                                                                     std::int64_t created_unix,
                                                                     bool cover_authority) {
  const std::string content_digest = ContentDigestSha256(request.body);
  SignatureParams params;
  params.components = {std::string(kMethod), std::string(kAuthority), std::string(kPath),
                       std::string(kQuery), std::string(kContentDigest)};
  if (!cover_authority) std::erase(params.components, std::string(kAuthority));
  params.created = created_unix;
  params.keyid = key.keyid();
  params.alg = std::string(AlgorithmName(key.algorithm()));

  std::vector<Component> covered;
  for (const std::string& name : params.components) {
    covered.push_back({name, *ComponentValue(name, request, content_digest)});
  }
  Result<std::string> base = SignatureBase(covered, params);
  if (!base) return base.status();
  Result<std::string> signature = key.Sign(*base);
  if (!signature) return signature.status();

  const std::string label(kSignatureLabel);
  return std::vector<std::pair<std::string, std::string>>{
      {"Content-Digest", content_digest},
      {"Signature-Input", label + "=" + SerializeParams(params)},
      {"Signature", label + "=" + ByteSequence(*signature)},
  };
}

Status VerifyRequest(const SignedRequest& request,
                     const std::vector<std::pair<std::string, std::string>>& fields,
                     const VerifyPolicy& policy, std::int64_t now_unix) {
  const std::optional<std::string> input_field = FieldValue(fields, "Signature-Input");
  if (!input_field) return Status::InvalidArgument("no Signature-Input");
  const std::optional<std::string> signature_field = FieldValue(fields, "Signature");
  if (!signature_field) return Status::InvalidArgument("no Signature");

  Result<ParsedInput> input = ParseSignatureInput(*input_field);
  if (!input) {
    return Status::InvalidArgument("malformed Signature-Input: " + input.status().message());
  }
  Result<std::string> signature = ParseSignature(*signature_field, input->label);
  if (!signature) {
    return Status::InvalidArgument("malformed Signature: " + signature.status().message());
  }
  const SignatureParams& params = input->params;

  // What must be covered, then nothing Settle does not sign.
  std::vector<std::string_view> required = {kMethod, kPath, kQuery, kContentDigest};
  if (policy.check_authority) required.insert(required.begin() + 1, kAuthority);
  for (std::string_view name : required) {
    if (std::find(params.components.begin(), params.components.end(), name) ==
        params.components.end()) {
      return Status::InvalidArgument(std::string(name) + " is not covered");
    }
  }
  for (const std::string& name : params.components) {
    if (!ComponentValue(name, request, "")) {
      // Component names are lowercase (ParseSignatureInput checks them): quoted as they are.
      return Status::InvalidArgument("component \"" + name + "\" is not one Settle signs");
    }
  }

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

  const std::optional<std::string> digest_field = FieldValue(fields, "Content-Digest");
  if (!digest_field) return Status::InvalidArgument("no Content-Digest");
  if (*digest_field != ContentDigestSha256(request.body)) {
    return Status::InvalidArgument("Content-Digest does not match the body");
  }

  std::vector<Component> covered;
  for (const std::string& name : params.components) {
    covered.push_back({name, *ComponentValue(name, request, *digest_field)});
  }
  Result<std::string> base = SignatureBase(covered, params);
  if (!base) {
    return Status::InvalidArgument("the signature base cannot be built: " +
                                   base.status().message());
  }
  if (!key->Verify(*base, *signature)) {
    return Status::InvalidArgument("signature does not verify with key " + Quote(key->keyid()));
  }
  return Status::Ok();
}

}  // namespace settle::signing
