#include "settle/signing/request_signature.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "rfc9421_keys.h"
#include "settle/signing/content_digest.h"
#include "settle/signing/signature_base.h"
#include "signed_fields.h"

namespace settle::signing {
namespace {

using testing::Get;
using testing::Kind;
using testing::Refusal;
using testing::Remove;
using testing::Set;

using Fields = std::vector<std::pair<std::string, std::string>>;

constexpr std::int64_t kCreated = 1700000000;

// RFC 8032 §7.1 TEST 1's secret key as PKCS #8: an Ed25519 key other than RFC 9421's.
constexpr std::string_view kOtherEd25519Private =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
    "-----END PRIVATE KEY-----\n";

SignedRequest Request() {
  return SignedRequest{.method = "POST",
                       .authority = "bank.example:8081",
                       .path = "/api/TransOut",
                       .query = "gid=g1&trans_type=saga&branch_id=01&op=action",
                       .body = "{\"amount\":30}"};
}

SigningKey Signer(std::string_view text) {
  auto key = SigningKey::FromText(text);
  REQUIRE(key);
  return *key;
}

VerifyingKey Verifier(std::string_view text) {
  auto key = VerifyingKey::FromText(text);
  REQUIRE(key);
  return *key;
}

SigningKey EdSigner() { return Signer(testing::kRfcEd25519Private); }
VerifyingKey EdVerifier() { return Verifier(testing::kRfcEd25519Public); }
SigningKey HmacSigner() { return Signer(testing::kRfcSharedSecret); }
VerifyingKey HmacVerifier() { return Verifier(testing::kRfcSharedSecret); }

// A verifier that answers to the authority Request() is signed for.
VerifyPolicy Policy(std::vector<VerifyingKey> keys) {
  VerifyPolicy policy;
  policy.keys = std::move(keys);
  policy.authorities = {"bank.example:8081"};
  return policy;
}

Fields Sign(const SignedRequest& request, const SigningKey& key, std::int64_t created = kCreated) {
  auto fields = SignRequest(request, key, created);
  REQUIRE(fields);
  return *fields;
}

// The values Settle signs, written out here rather than derived by the library.
std::string Value(std::string_view name, const SignedRequest& request) {
  if (name == "@method") return request.method;
  if (name == "@authority") return request.authority;
  if (name == "@path") return request.path;
  if (name == "@query") return "?" + request.query;
  if (name == "content-digest") return ContentDigestSha256(request.body);
  if (name == "date") return "Tue, 14 Nov 2023 22:13:20 GMT";
  FAIL("no value for " << name);
  return "";
}

SignatureParams FullParams(const SigningKey& key) {
  return SignatureParams{
      .components = {"@method", "@authority", "@path", "@query", "content-digest"},
      .created = kCreated,
      .keyid = key.keyid(),
      .alg = std::string(AlgorithmName(key.algorithm()))};
}

// Fields for a signature made by hand over `params`, for what SignRequest never makes.
Fields SignCustom(const SignedRequest& request, const SigningKey& key,
                  const SignatureParams& params, const std::string& label = "settle") {
  std::vector<Component> covered;
  for (const std::string& name : params.components) covered.push_back({name, Value(name, request)});
  auto base = SignatureBase(covered, params);
  REQUIRE(base);
  auto signature = key.Sign(*base);
  REQUIRE(signature);
  return {{"Content-Digest", ContentDigestSha256(request.body)},
          {"Signature-Input", label + "=" + SerializeParams(params)},
          {"Signature", label + "=" + ByteSequence(*signature)}};
}

TEST_CASE("SignRequest adds Content-Digest, Signature-Input and Signature over five components",
          "[signing][request]") {
  const Fields fields = Sign(Request(), EdSigner());
  REQUIRE(fields.size() == 3);
  CHECK(fields[0].first == "Content-Digest");
  CHECK(fields[1].first == "Signature-Input");
  CHECK(fields[2].first == "Signature");
  CHECK(fields[0].second == ContentDigestSha256("{\"amount\":30}"));
  CHECK(fields[1].second ==
        "settle=(\"@method\" \"@authority\" \"@path\" \"@query\" \"content-digest\")"
        ";created=1700000000;keyid=\"ed25519-b16c2d1bead12626\";alg=\"ed25519\"");
  CHECK(fields[2].second.starts_with("settle=:"));
  CHECK(fields[2].second.ends_with(":"));

  // The base, written out as docs/protocol.md §4.9 describes it: the signature is over it.
  const std::string base =
      "\"@method\": POST\n"
      "\"@authority\": bank.example:8081\n"
      "\"@path\": /api/TransOut\n"
      "\"@query\": ?gid=g1&trans_type=saga&branch_id=01&op=action\n"
      "\"content-digest\": " +
      ContentDigestSha256("{\"amount\":30}") +
      "\n"
      "\"@signature-params\": (\"@method\" \"@authority\" \"@path\" \"@query\" "
      "\"content-digest\");created=1700000000;keyid=\"ed25519-b16c2d1bead12626\";alg=\"ed25519\"";
  auto signature = ParseSignature(fields[2].second, "settle");
  REQUIRE(signature);
  CHECK(EdVerifier().Verify(base, *signature));

  // The method is uppercased and the authority lowercased before signing.
  SignedRequest mixed = Request();
  mixed.method = "post";
  mixed.authority = "Bank.EXAMPLE:8081";
  const Fields mixed_fields = Sign(mixed, EdSigner());
  auto mixed_signature = ParseSignature(Get(mixed_fields, "Signature"), "settle");
  REQUIRE(mixed_signature);
  CHECK(*mixed_signature == *signature);

  const Fields hmac = Sign(Request(), HmacSigner());
  CHECK(Get(hmac, "Signature-Input") ==
        "settle=(\"@method\" \"@authority\" \"@path\" \"@query\" \"content-digest\")"
        ";created=1700000000;keyid=\"hmac-57ca14d520f889be\";alg=\"hmac-sha256\"");
}

TEST_CASE("a signed request verifies with either algorithm, its field names in any case",
          "[signing][request]") {
  const SignedRequest request = Request();
  const VerifyPolicy policy = Policy({EdVerifier(), HmacVerifier()});
  for (const SigningKey& key : {EdSigner(), HmacSigner()}) {
    INFO("key " << key.keyid());
    Fields fields = Sign(request, key);
    CHECK(VerifyRequest(request, fields, policy, kCreated).ok());
    for (auto& [name, value] : fields) {
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    CHECK(VerifyRequest(request, fields, policy, kCreated).ok());
    for (auto& [name, value] : fields) {
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    CHECK(VerifyRequest(request, fields, policy, kCreated).ok());
  }

  // Other fields around them change nothing; a request read with another case of method and
  // Host still verifies.
  Fields fields = Sign(request, EdSigner());
  fields.insert(fields.begin(), {"Content-Type", "application/json"});
  fields.emplace_back("Dtm-Gid", "g1");
  SignedRequest received = request;
  received.method = "post";
  received.authority = "BANK.example:8081";
  CHECK(VerifyRequest(received, fields, policy, kCreated).ok());
}

TEST_CASE("an empty path, query and body are signed as /, ? and the empty body's digest",
          "[signing][request]") {
  SignedRequest request = Request();
  request.method = "GET";
  request.path = "";
  request.query = "";
  request.body = "";
  const Fields fields = Sign(request, HmacSigner());
  CHECK(Get(fields, "Content-Digest") == "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:");
  const std::string base =
      "\"@method\": GET\n"
      "\"@authority\": bank.example:8081\n"
      "\"@path\": /\n"
      "\"@query\": ?\n"
      "\"content-digest\": sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:\n"
      "\"@signature-params\": (\"@method\" \"@authority\" \"@path\" \"@query\" "
      "\"content-digest\");created=1700000000;keyid=\"hmac-57ca14d520f889be\";alg=\"hmac-sha256\"";
  auto signature = ParseSignature(Get(fields, "Signature"), "settle");
  REQUIRE(signature);
  CHECK(HmacVerifier().Verify(base, *signature));

  const VerifyPolicy policy = Policy({HmacVerifier()});
  CHECK(VerifyRequest(request, fields, policy, kCreated).ok());
  SignedRequest slash = request;
  slash.path = "/";
  CHECK(VerifyRequest(slash, fields, policy, kCreated).ok());
}

TEST_CASE("a request without its fields is refused", "[signing][request]") {
  const SignedRequest request = Request();
  const VerifyPolicy policy = Policy({EdVerifier()});
  CHECK(Refusal(VerifyRequest(request, {}, policy, kCreated)) == "no Signature-Input");

  Fields fields = Sign(request, EdSigner());
  Fields no_signature = fields;
  Remove(no_signature, "Signature");
  CHECK(Refusal(VerifyRequest(request, no_signature, policy, kCreated)) == "no Signature");
  Fields no_input = fields;
  Remove(no_input, "Signature-Input");
  CHECK(Refusal(VerifyRequest(request, no_input, policy, kCreated)) == "no Signature-Input");
  Fields no_digest = fields;
  Remove(no_digest, "Content-Digest");
  CHECK(Refusal(VerifyRequest(request, no_digest, policy, kCreated)) == "no Content-Digest");
}

TEST_CASE("a request changed after signing is refused", "[signing][request]") {
  const SignedRequest request = Request();
  const VerifyPolicy policy = Policy({EdVerifier()});
  const Fields fields = Sign(request, EdSigner());
  const std::string does_not_verify =
      "signature does not verify with key \"ed25519-b16c2d1bead12626\"";

  SignedRequest body = request;
  body.body = "{\"amount\":3000}";
  CHECK(Refusal(VerifyRequest(body, fields, policy, kCreated)) ==
        "Content-Digest does not match the body");
  // The digest replaced to match the new body: the signature covers the old one.
  Fields redigested = fields;
  Set(redigested, "Content-Digest", ContentDigestSha256(body.body));
  CHECK(Refusal(VerifyRequest(body, redigested, policy, kCreated)) == does_not_verify);
  // A second Content-Digest makes the field the two values joined: not the body's.
  Fields two_digests = fields;
  two_digests.emplace_back("content-digest", ContentDigestSha256(request.body));
  CHECK(Refusal(VerifyRequest(request, two_digests, policy, kCreated)) ==
        "Content-Digest does not match the body");

  SignedRequest path = request;
  path.path = "/api/TransIn";
  CHECK(Refusal(VerifyRequest(path, fields, policy, kCreated)) == does_not_verify);
  SignedRequest query = request;
  query.query = "gid=g2&trans_type=saga&branch_id=01&op=action";
  CHECK(Refusal(VerifyRequest(query, fields, policy, kCreated)) == does_not_verify);
  SignedRequest no_query = request;
  no_query.query = "";
  CHECK(Refusal(VerifyRequest(no_query, fields, policy, kCreated)) == does_not_verify);
  SignedRequest method = request;
  method.method = "PUT";
  CHECK(Refusal(VerifyRequest(method, fields, policy, kCreated)) == does_not_verify);

  // The parameters are signed too: a created moved forward does not verify.
  Fields later = fields;
  std::string input = Get(later, "Signature-Input");
  input.replace(input.find("created=1700000000"), 18, "created=1700000100");
  Set(later, "Signature-Input", input);
  CHECK(Refusal(VerifyRequest(request, later, policy, kCreated + 100)) == does_not_verify);

  // A signature cut short, or longer, with valid base64.
  Fields cut = fields;
  auto bytes = ParseSignature(Get(fields, "Signature"), "settle");
  REQUIRE(bytes);
  Set(cut, "Signature", "settle=" + ByteSequence(bytes->substr(0, 63)));
  CHECK(Refusal(VerifyRequest(request, cut, policy, kCreated)) == does_not_verify);
  Set(cut, "Signature", "settle=" + ByteSequence(*bytes + "x"));
  CHECK(Refusal(VerifyRequest(request, cut, policy, kCreated)) == does_not_verify);
}

TEST_CASE("a signature must name an authority the verifier answers to, not the Host it came with",
          "[signing][request][authority]") {
  const SignedRequest request = Request();  // signed for bank.example:8081
  const Fields fields = Sign(request, EdSigner());

  // Behind a proxy that rewrote Host, the name the verifier answers to is what counts.
  SignedRequest proxied = request;
  proxied.authority = "10.0.0.7:9000";
  CHECK(VerifyRequest(proxied, fields, Policy({EdVerifier()}), kCreated).ok());
  // Names are compared without case, and any of several passes.
  VerifyPolicy several = Policy({EdVerifier()});
  several.authorities = {"bank.internal:8081", "BANK.Example:8081"};
  CHECK(VerifyRequest(proxied, fields, several, kCreated).ok());

  // The same call replayed to another participant that trusts the key: refused, whether the
  // replayer keeps the signed name in Host or moves it to X-Forwarded-Host.
  VerifyPolicy other = Policy({EdVerifier()});
  other.authorities = {"other-bank.example:8082"};
  const Verdict kept_host = VerifyRequest(request, fields, other, kCreated);
  CHECK(Kind(kept_host) == "authority_mismatch");
  CHECK(Refusal(kept_host) ==
        "signed for authority \"bank.example:8081\" (the call's Host), which is not one this "
        "participant answers to (\"other-bank.example:8082\")");
  SignedRequest to_other = request;
  to_other.authority = "other-bank.example:8082";
  Fields forwarded = fields;
  forwarded.emplace_back("X-Forwarded-Host", "bank.example:8081");
  const Verdict moved = VerifyRequest(to_other, forwarded, other, kCreated);
  CHECK(Kind(moved) == "authority_mismatch");
  CHECK_THAT(Refusal(moved), Catch::StartsWith("signed for authority \"bank.example:8081\" (the "
                                               "call's X-Forwarded-Host)"));
  // Without either, nothing says which name it was signed for: a bad signature.
  CHECK(Kind(VerifyRequest(to_other, fields, other, kCreated)) == "bad_signature");
  // A verifier with no names accepts nothing signed for one.
  VerifyPolicy none = Policy({EdVerifier()});
  none.authorities.clear();
  CHECK_THAT(Refusal(VerifyRequest(request, fields, none, kCreated)),
             Catch::EndsWith("(none configured)"));
  // Anything else changed as well is a bad signature, whatever the names.
  SignedRequest tampered = request;
  tampered.query = "gid=g2&trans_type=saga&branch_id=01&op=action";
  CHECK(Kind(VerifyRequest(tampered, fields, other, kCreated)) == "bad_signature");
}

TEST_CASE("without check_authority a covered authority may also be the Host it came with",
          "[signing][request][authority]") {
  const SignedRequest request = Request();
  VerifyPolicy policy = Policy({EdVerifier()});
  policy.authorities = {"other-bank.example:8082"};
  policy.check_authority = false;
  const Fields fields = Sign(request, EdSigner());
  CHECK(VerifyRequest(request, fields, policy, kCreated).ok());
  SignedRequest proxied = request;
  proxied.authority = "10.0.0.7:9000";
  CHECK(Kind(VerifyRequest(proxied, fields, policy, kCreated)) == "bad_signature");

  // A signature that leaves @authority out verifies wherever it arrives when the policy allows
  // it, and is refused when the policy checks the authority.
  SignatureParams params = FullParams(EdSigner());
  params.components.erase(params.components.begin() + 1);
  const Fields without_authority = SignCustom(request, EdSigner(), params);
  CHECK(VerifyRequest(proxied, without_authority, policy, kCreated).ok());
  CHECK(VerifyRequest(request, without_authority, policy, kCreated).ok());
  policy.check_authority = true;
  CHECK(Refusal(VerifyRequest(request, without_authority, policy, kCreated)) ==
        "@authority is not covered");
}

TEST_CASE("a tag says what a signature is for: a countersigned Try is no call of settled's",
          "[signing][request][tag]") {
  const SignedRequest request = Request();
  auto tagged = SignRequest(request, EdSigner(), kCreated, true, kRegisteredTryTag);
  REQUIRE(tagged);
  CHECK_THAT(Get(*tagged, "Signature-Input"), Catch::EndsWith(";tag=\"settle-try\""));
  const Fields untagged = Sign(request, EdSigner());

  VerifyPolicy for_try = Policy({EdVerifier()});
  for_try.tags = {std::string(kRegisteredTryTag)};
  CHECK(VerifyRequest(request, *tagged, for_try, kCreated).ok());
  const Verdict no_tag = VerifyRequest(request, untagged, for_try, kCreated);
  CHECK(Kind(no_tag) == "malformed");
  CHECK(Refusal(no_tag) == "the signature has no tag; this call needs \"settle-try\"");

  const VerifyPolicy for_calls = Policy({EdVerifier()});
  CHECK(VerifyRequest(request, untagged, for_calls, kCreated).ok());
  const Verdict countersigned = VerifyRequest(request, *tagged, for_calls, kCreated);
  CHECK(Kind(countersigned) == "malformed");
  CHECK(Refusal(countersigned) ==
        "the signature is tagged \"settle-try\", which is not a signature of this call's kind");

  // The tag is signed: changing it in Signature-Input breaks the signature.
  Fields retagged = *tagged;
  std::string input = Get(retagged, "Signature-Input");
  input.replace(input.find("settle-try"), 10, "settle-tr2");
  Set(retagged, "Signature-Input", input);
  VerifyPolicy for_other = for_try;
  for_other.tags = {"settle-tr2"};
  CHECK(Kind(VerifyRequest(request, retagged, for_other, kCreated)) == "bad_signature");
}

TEST_CASE("every component Settle requires must be covered, and nothing else",
          "[signing][request]") {
  const SignedRequest request = Request();
  const VerifyPolicy policy = Policy({EdVerifier()});
  const SigningKey key = EdSigner();
  for (const std::string& name : FullParams(key).components) {
    INFO("without " << name);
    SignatureParams params = FullParams(key);
    std::erase(params.components, name);
    CHECK(Refusal(VerifyRequest(request, SignCustom(request, key, params), policy, kCreated)) ==
          name + " is not covered");
  }

  SignatureParams extra = FullParams(key);
  extra.components.push_back("date");
  CHECK(Refusal(VerifyRequest(request, SignCustom(request, key, extra), policy, kCreated)) ==
        "component \"date\" is not one Settle signs");

  // The list is the signature's own: another order of the same components verifies.
  SignatureParams reversed = FullParams(key);
  std::reverse(reversed.components.begin(), reversed.components.end());
  CHECK(VerifyRequest(request, SignCustom(request, key, reversed), policy, kCreated).ok());
}

TEST_CASE("a keyid the verifier does not trust is refused", "[signing][request]") {
  const SignedRequest request = Request();
  const Fields fields = Sign(request, EdSigner());
  CHECK(Refusal(VerifyRequest(request, fields, Policy({HmacVerifier()}), kCreated)) ==
        "unknown keyid \"ed25519-b16c2d1bead12626\"");
  CHECK(Refusal(VerifyRequest(request, fields, Policy({}), kCreated)) ==
        "unknown keyid \"ed25519-b16c2d1bead12626\"");

  // A keyid is quoted without the words of a verdict, and cut short.
  SignatureParams params = FullParams(EdSigner());
  params.keyid = "SUCCESS \"FAILURE\" ONGOING";
  CHECK(Refusal(VerifyRequest(request, SignCustom(request, EdSigner(), params),
                              Policy({EdVerifier()}), kCreated)) ==
        "unknown keyid \"success \\\"failure\\\" ongoing\"");
  params.keyid = std::string(200, 'k');
  CHECK(Refusal(VerifyRequest(request, SignCustom(request, EdSigner(), params),
                              Policy({EdVerifier()}), kCreated)) ==
        "unknown keyid \"" + std::string(80, 'k') + "\"...");
}

TEST_CASE("a signature by another key under a trusted keyid does not verify",
          "[signing][request]") {
  const SignedRequest request = Request();
  const SigningKey impostor = Signer(kOtherEd25519Private);
  CHECK(impostor.keyid() != EdSigner().keyid());
  SignatureParams params = FullParams(impostor);
  params.keyid = EdSigner().keyid();
  CHECK(Refusal(VerifyRequest(request, SignCustom(request, impostor, params),
                              Policy({EdVerifier()}), kCreated)) ==
        "signature does not verify with key \"ed25519-b16c2d1bead12626\"");

  // An HMAC signature presented under the Ed25519 key's keyid and alg.
  SignatureParams hmac_params = FullParams(EdSigner());
  CHECK(Refusal(VerifyRequest(request, SignCustom(request, HmacSigner(), hmac_params),
                              Policy({EdVerifier(), HmacVerifier()}), kCreated)) ==
        "signature does not verify with key \"ed25519-b16c2d1bead12626\"");
}

TEST_CASE("alg must be the key's algorithm when it is given", "[signing][request]") {
  const SignedRequest request = Request();
  const VerifyPolicy policy = Policy({EdVerifier(), HmacVerifier()});
  SignatureParams params = FullParams(EdSigner());
  params.alg = "hmac-sha256";
  CHECK(
      Refusal(VerifyRequest(request, SignCustom(request, EdSigner(), params), policy, kCreated)) ==
      "alg \"hmac-sha256\" is not the algorithm of key \"ed25519-b16c2d1bead12626\" "
      "(ed25519)");
  params.alg = "rsa-pss-sha512";
  CHECK(Refusal(VerifyRequest(request, SignCustom(request, EdSigner(), params), policy, kCreated))
            .starts_with("alg \"rsa-pss-sha512\" is not the algorithm of key"));
  SignatureParams hmac = FullParams(HmacSigner());
  hmac.alg = "ed25519";
  CHECK(
      Refusal(VerifyRequest(request, SignCustom(request, HmacSigner(), hmac), policy, kCreated)) ==
      "alg \"ed25519\" is not the algorithm of key \"hmac-57ca14d520f889be\" (hmac-sha256)");

  // Without alg, the key's algorithm is used.
  params.alg.clear();
  CHECK(VerifyRequest(request, SignCustom(request, EdSigner(), params), policy, kCreated).ok());
}

TEST_CASE("created must lie within the window, either way", "[signing][request]") {
  const SignedRequest request = Request();
  VerifyPolicy policy = Policy({EdVerifier()});
  const Fields fields = Sign(request, EdSigner());
  CHECK(VerifyRequest(request, fields, policy, kCreated + 300).ok());
  CHECK(VerifyRequest(request, fields, policy, kCreated - 300).ok());
  CHECK(Refusal(VerifyRequest(request, fields, policy, kCreated + 301)) ==
        "created 301 s before now, outside the 300 s window");
  CHECK(Refusal(VerifyRequest(request, fields, policy, kCreated - 301)) ==
        "created 301 s after now, outside the 300 s window");
  CHECK(Refusal(VerifyRequest(request, fields, policy, kCreated + 400)) ==
        "created 400 s before now, outside the 300 s window");

  policy.window = std::chrono::seconds(10);
  CHECK(VerifyRequest(request, fields, policy, kCreated + 10).ok());
  CHECK(Refusal(VerifyRequest(request, fields, policy, kCreated + 11)) ==
        "created 11 s before now, outside the 10 s window");
  policy.window = std::chrono::seconds(0);
  CHECK(VerifyRequest(request, fields, policy, kCreated).ok());
  CHECK(Refusal(VerifyRequest(request, fields, policy, kCreated - 1)) ==
        "created 1 s after now, outside the 0 s window");

  // The window is checked before the signature: a created far off is named as such.
  SignatureParams params = FullParams(EdSigner());
  params.created = -999'999'999'999'999;
  policy.window = std::chrono::seconds(300);
  CHECK_THAT(
      Refusal(VerifyRequest(request, SignCustom(request, EdSigner(), params), policy, kCreated)),
      Catch::Contains("s before now, outside the 300 s window"));
}

TEST_CASE("a malformed Signature-Input or Signature is refused", "[signing][request]") {
  const SignedRequest request = Request();
  const VerifyPolicy policy = Policy({EdVerifier()});
  const Fields fields = Sign(request, EdSigner());
  const std::string input = Get(fields, "Signature-Input");
  const std::string signature = Get(fields, "Signature");
  const std::string list = input.substr(std::string("settle=").size());

  const std::vector<std::string> bad_inputs = {
      std::string(""),
      std::string("settle"),
      std::string("settle=(\"@method\""),
      input + ", other=" + list,
      input + ";expires=1700000300",
      input + ";nonce=\"abc\"",
      "settle=(\"@method\" \"@method\" \"@authority\" \"@path\" \"@query\" "
      "\"content-digest\");created=1700000000;keyid=\"k\"",
      "settle=(\"@method\"\t\"@authority\" \"@path\" \"@query\" \"content-digest\")"
      ";created=1700000000;keyid=\"k\"",
      "settle=(\"@method\" \"@authority\" \"@path\" \"@query\" \"content-digest\")"
      ";created=1700000000;keyid=\"a\\k\"",
      "settle=(\"@method\" \"@authority\" \"@path\" \"@query\" \"content-digest\")"
      ";keyid=\"k\";created=1700000000",
      "settle=(\"@method\" \"@authority\" \"@path\" \"@query\" \"content-digest\")"
      ";created=1700000000",
  };
  for (const std::string& bad : bad_inputs) {
    INFO("Signature-Input: " << bad);
    Fields changed = fields;
    Set(changed, "Signature-Input", bad);
    CHECK(Refusal(VerifyRequest(request, changed, policy, kCreated))
              .starts_with("malformed Signature-Input: "));
  }

  // Two Signature-Input fields are one field of two members.
  Fields two_inputs = fields;
  two_inputs.emplace_back("Signature-Input", "other=" + list);
  CHECK(Refusal(VerifyRequest(request, two_inputs, policy, kCreated)) ==
        "malformed Signature-Input: the field has several members; one is expected");

  for (const std::string& bad :
       {std::string("settle=:not base64!:"), std::string("settle=abc"), std::string("settle=:abc"),
        "other" + signature.substr(6), signature + ", other=:AAAA:", signature + ";x=1"}) {
    INFO("Signature: " << bad);
    Fields changed = fields;
    Set(changed, "Signature", bad);
    CHECK(Refusal(VerifyRequest(request, changed, policy, kCreated))
              .starts_with("malformed Signature: "));
  }
}

TEST_CASE("RFC 8941's optional spaces and another label are accepted", "[signing][request]") {
  const SignedRequest request = Request();
  const VerifyPolicy policy = Policy({EdVerifier()});
  Fields fields = Sign(request, EdSigner());
  std::string input = Get(fields, "Signature-Input");
  // "settle=(" -> "settle=(  ", '" "' -> '"   "', ';' -> '; ', and trailing blanks.
  std::string spaced;
  for (std::size_t i = 0; i < input.size(); ++i) {
    spaced += input[i];
    if (input[i] == '(' || input[i] == ';') spaced += "  ";
    if (input[i] == '"' && i + 1 < input.size() && input[i + 1] == ' ') spaced += "  ";
  }
  spaced.insert(0, "  ");
  spaced += " \t";
  Set(fields, "Signature-Input", spaced);
  Set(fields, "Signature", "  " + Get(fields, "Signature") + "  ");
  CHECK(VerifyRequest(request, fields, policy, kCreated).ok());

  const Fields labelled = SignCustom(request, EdSigner(), FullParams(EdSigner()), "sig1");
  CHECK(VerifyRequest(request, labelled, policy, kCreated).ok());
  Fields mismatched = labelled;
  Set(mismatched, "Signature", "settle" + Get(labelled, "Signature").substr(4));
  CHECK(Refusal(VerifyRequest(request, mismatched, policy, kCreated)) ==
        "malformed Signature: there is no member \"sig1\"");
}

TEST_CASE("while a key is rotated, a signature by either trusted key verifies",
          "[signing][request]") {
  const SignedRequest request = Request();
  const VerifyPolicy policy = Policy({EdVerifier(), HmacVerifier()});
  CHECK(VerifyRequest(request, Sign(request, EdSigner()), policy, kCreated).ok());
  CHECK(VerifyRequest(request, Sign(request, HmacSigner()), policy, kCreated).ok());
  const SigningKey third = Signer(kOtherEd25519Private);
  CHECK(Refusal(VerifyRequest(request, Sign(request, third), policy, kCreated)) ==
        "unknown keyid \"" + third.keyid() + "\"");
  CHECK(VerifyRequest(request, Sign(request, third),
                      Policy({EdVerifier(), Verifier(kOtherEd25519Private)}), kCreated)
            .ok());
}

TEST_CASE("a request whose values would forge a line of the base is refused",
          "[signing][request]") {
  SignedRequest request = Request();
  request.path = "/api/TransOut\n\"@query\": ?x";
  auto fields = SignRequest(request, EdSigner(), kCreated);
  REQUIRE_FALSE(fields);
  CHECK(Refusal(fields.status()) == "the value of \"@path\" holds a control character");

  const Fields good = Sign(Request(), EdSigner());
  SignedRequest received = Request();
  received.query = "gid=g1\r";
  CHECK(Refusal(VerifyRequest(received, good, Policy({EdVerifier()}), kCreated)) ==
        "the signature base cannot be built: the value of \"@query\" holds a control character");
}

TEST_CASE("each refusal of a request says its kind", "[signing][request][kind]") {
  const SignedRequest request = Request();
  const VerifyPolicy policy = Policy({EdVerifier()});
  const Fields fields = Sign(request, EdSigner());
  auto verify = [&](const SignedRequest& arrived, const Fields& with) {
    return Kind(VerifyRequest(arrived, with, policy, kCreated));
  };

  CHECK(verify(request, {}) == "unsigned");

  Fields input_alone = fields;
  Remove(input_alone, "Signature");
  CHECK(verify(request, input_alone) == "malformed");
  Fields signature_alone = fields;
  Remove(signature_alone, "Signature-Input");
  CHECK(verify(request, signature_alone) == "malformed");
  Fields unreadable = fields;
  Set(unreadable, "Signature-Input", "settle=(\"@method\"");
  CHECK(verify(request, unreadable) == "malformed");
  SignatureParams extra = FullParams(EdSigner());
  extra.components.push_back("date");
  CHECK(verify(request, SignCustom(request, EdSigner(), extra)) == "malformed");

  SignatureParams no_query = FullParams(EdSigner());
  std::erase(no_query.components, "@query");
  CHECK(verify(request, SignCustom(request, EdSigner(), no_query)) == "not_covered");
  Fields no_digest = fields;
  Remove(no_digest, "Content-Digest");
  CHECK(verify(request, no_digest) == "not_covered");

  CHECK(Kind(VerifyRequest(request, fields, Policy({HmacVerifier()}), kCreated)) == "unknown_key");
  SignatureParams other_alg = FullParams(EdSigner());
  other_alg.alg = "hmac-sha256";
  CHECK(verify(request, SignCustom(request, EdSigner(), other_alg)) == "wrong_algorithm");
  CHECK(Kind(VerifyRequest(request, fields, policy, kCreated + 301)) == "outside_window");
  CHECK(Kind(VerifyRequest(request, fields, policy, kCreated - 301)) == "outside_window");

  SignedRequest body = request;
  body.body = "{\"amount\":3000}";
  CHECK(verify(body, fields) == "digest_mismatch");
  SignedRequest path = request;
  path.path = "/api/TransIn";
  CHECK(verify(path, fields) == "bad_signature");
}

}  // namespace
}  // namespace settle::signing
