// The gRPC form of a signed branch call (docs/protocol.md §4.9): the signature travels as
// metadata and covers the method path, the authority, every dtm-* key and the message's digest.
#include "settle/signing/grpc_call_signature.h"

#include <catch2/catch.hpp>
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

using Metadata = std::vector<std::pair<std::string, std::string>>;

constexpr std::int64_t kCreated = 1700000000;
// A protobuf message's bytes (field 1 = 30, field 2 = "1"): not text.
const std::string kMessage("\x08\x1e\x12\x01\x31", 5);

// RFC 8032 §7.1 TEST 1's secret key as PKCS #8: an Ed25519 key other than RFC 9421's.
constexpr std::string_view kOtherEd25519Private =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
    "-----END PRIVATE KEY-----\n";

// A saga action as settled calls it, with a branch header beside the dtm-* metadata.
SignedGrpcCall Call() {
  return SignedGrpcCall{.authority = "bank.example:9000",
                        .method = "/bank.Bank/TransOut",
                        .metadata = {{"x-trace-id", "t-1"},
                                     {"dtm-gid", "g1"},
                                     {"dtm-trans_type", "saga"},
                                     {"dtm-branch_id", "01"},
                                     {"dtm-op", "action"},
                                     {"dtm-dtm", "127.0.0.1:36790"}},
                        .message = kMessage};
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

// A verifier that answers to the authority Call() is signed for.
VerifyPolicy Policy(std::vector<VerifyingKey> keys) {
  VerifyPolicy policy;
  policy.keys = std::move(keys);
  policy.authorities = {"bank.example:9000"};
  return policy;
}

// `call` as it arrives once signed by `key`: its metadata and the signature's.
SignedGrpcCall Signed(SignedGrpcCall call, const SigningKey& key, std::int64_t created = kCreated,
                      bool cover_authority = true) {
  auto added = SignGrpcCall(call, key, created, cover_authority);
  REQUIRE(added);
  call.metadata.insert(call.metadata.end(), added->begin(), added->end());
  return call;
}

constexpr std::string_view kDoesNotVerify =
    "signature does not verify with key \"ed25519-b16c2d1bead12626\"";

TEST_CASE("SignGrpcCall adds content-digest, signature-input and signature over the dtm-* keys",
          "[signing][grpc]") {
  auto added = SignGrpcCall(Call(), EdSigner(), kCreated);
  REQUIRE(added);
  REQUIRE(added->size() == 3);
  CHECK((*added)[0].first == "content-digest");
  CHECK((*added)[1].first == "signature-input");
  CHECK((*added)[2].first == "signature");
  CHECK((*added)[0].second == ContentDigestSha256(kMessage));
  CHECK((*added)[1].second ==
        "settle=(\"@method\" \"@authority\" \"@path\" \"dtm-gid\" \"dtm-trans_type\" "
        "\"dtm-branch_id\" \"dtm-op\" \"dtm-dtm\" \"content-digest\")"
        ";created=1700000000;keyid=\"ed25519-b16c2d1bead12626\";alg=\"ed25519\"");

  // The base, written out as docs/protocol.md §4.9 shows it: the signature is over it.
  const std::string base =
      "\"@method\": POST\n"
      "\"@authority\": bank.example:9000\n"
      "\"@path\": /bank.Bank/TransOut\n"
      "\"dtm-gid\": g1\n"
      "\"dtm-trans_type\": saga\n"
      "\"dtm-branch_id\": 01\n"
      "\"dtm-op\": action\n"
      "\"dtm-dtm\": 127.0.0.1:36790\n"
      "\"content-digest\": " +
      ContentDigestSha256(kMessage) +
      "\n"
      "\"@signature-params\": (\"@method\" \"@authority\" \"@path\" \"dtm-gid\" "
      "\"dtm-trans_type\" \"dtm-branch_id\" \"dtm-op\" \"dtm-dtm\" \"content-digest\")"
      ";created=1700000000;keyid=\"ed25519-b16c2d1bead12626\";alg=\"ed25519\"";
  auto signature = ParseSignature((*added)[2].second, "settle");
  REQUIRE(signature);
  CHECK(EdVerifier().Verify(base, *signature));
  // The worked example of docs/protocol.md §4.9 (Ed25519 signatures are deterministic).
  CHECK((*added)[0].second == "sha-256=:GdNa/NCJfj12MKLZkNiDQGBIZ25hNLhB9vfLu4kixgU=:");
  CHECK((*added)[2].second ==
        "settle=:WhNCxt6MgZ8/MfQvTw03HeMrXyjKhNRlK4SEpGRH9QWR2gETk0hfvyDlwim7EE3Z0ysbZTa4f1VSgmBEf"
        "SosBQ==:");

  // An XA branch's dtm-phase2_url is covered too, where it comes; without cover_authority,
  // "@authority" is left out.
  SignedGrpcCall xa = Call();
  xa.metadata.emplace_back("dtm-phase2_url", "bank.example:9000/bank.Bank/Xa");
  auto xa_added = SignGrpcCall(xa, HmacSigner(), kCreated, /*cover_authority=*/false);
  REQUIRE(xa_added);
  CHECK((*xa_added)[1].second ==
        "settle=(\"@method\" \"@path\" \"dtm-gid\" \"dtm-trans_type\" \"dtm-branch_id\" "
        "\"dtm-op\" \"dtm-dtm\" \"dtm-phase2_url\" \"content-digest\")"
        ";created=1700000000;keyid=\"hmac-57ca14d520f889be\";alg=\"hmac-sha256\"");
}

TEST_CASE("a signed gRPC call verifies with either algorithm, the authority in any case",
          "[signing][grpc]") {
  const VerifyPolicy policy = Policy({EdVerifier(), HmacVerifier()});
  for (const SigningKey& key : {EdSigner(), HmacSigner()}) {
    INFO("key " << key.keyid());
    SignedGrpcCall call = Signed(Call(), key);
    CHECK(VerifyGrpcCall(call, policy, kCreated).ok());
    call.authority = "BANK.example:9000";
    CHECK(VerifyGrpcCall(call, policy, kCreated).ok());
    // Metadata that is not dtm-* may come and go: gRPC adds its own (user-agent, ...).
    call.metadata.emplace_back("user-agent", "grpc-c++/1.51.1");
    Remove(call.metadata, "x-trace-id");
    CHECK(VerifyGrpcCall(call, policy, kCreated).ok());
  }
  // An empty message has a digest too.
  SignedGrpcCall empty = Call();
  empty.message.clear();
  CHECK(VerifyGrpcCall(Signed(empty, EdSigner()), policy, kCreated).ok());
}

TEST_CASE("an unsigned gRPC call, or one without its digest, is refused", "[signing][grpc]") {
  const VerifyPolicy policy = Policy({EdVerifier()});
  CHECK(Refusal(VerifyGrpcCall(Call(), policy, kCreated)) == "no signature-input");
  const SignedGrpcCall call = Signed(Call(), EdSigner());
  SignedGrpcCall no_signature = call;
  Remove(no_signature.metadata, "signature");
  CHECK(Refusal(VerifyGrpcCall(no_signature, policy, kCreated)) == "no signature");
  SignedGrpcCall no_digest = call;
  Remove(no_digest.metadata, "content-digest");
  CHECK(Refusal(VerifyGrpcCall(no_digest, policy, kCreated)) == "no content-digest");
  SignedGrpcCall malformed = call;
  Set(malformed.metadata, "signature-input", "settle=(\"@method\"");
  CHECK_THAT(Refusal(VerifyGrpcCall(malformed, policy, kCreated)),
             Catch::StartsWith("malformed signature-input: "));
}

TEST_CASE("a gRPC call changed after signing is refused", "[signing][grpc]") {
  const VerifyPolicy policy = Policy({EdVerifier()});
  const SignedGrpcCall call = Signed(Call(), EdSigner());

  SECTION("other message bytes") {
    SignedGrpcCall changed = call;
    changed.message = std::string("\x08\xe8\x07\x12\x01\x31", 6);  // 1000 instead of 30
    CHECK(Refusal(VerifyGrpcCall(changed, policy, kCreated)) ==
          "content-digest does not match the message");
    // The digest replaced to match: the signature covers the old one.
    Set(changed.metadata, "content-digest", ContentDigestSha256(changed.message));
    CHECK(Refusal(VerifyGrpcCall(changed, policy, kCreated)) == kDoesNotVerify);
  }
  SECTION("another gid, op, branch or transaction type") {
    for (const auto& [key, value] :
         {std::pair{"dtm-gid", "forged-1"}, std::pair{"dtm-op", "compensate"},
          std::pair{"dtm-branch_id", "02"}, std::pair{"dtm-trans_type", "tcc"},
          std::pair{"dtm-dtm", "evil.example:36790"}}) {
      INFO(key);
      SignedGrpcCall changed = call;
      Set(changed.metadata, key, value);
      CHECK(Refusal(VerifyGrpcCall(changed, policy, kCreated)) == kDoesNotVerify);
    }
    // A second value of a covered key is joined to the first: not what was signed.
    SignedGrpcCall twice = call;
    twice.metadata.emplace_back("dtm-gid", "g2");
    CHECK(Refusal(VerifyGrpcCall(twice, policy, kCreated)) == kDoesNotVerify);
  }
  SECTION("another method path") {
    SignedGrpcCall changed = call;
    changed.method = "/bank.Bank/TransIn";
    CHECK(Refusal(VerifyGrpcCall(changed, policy, kCreated)) == kDoesNotVerify);
  }
  SECTION("signed for another authority, unless the policy leaves it out") {
    // Replayed to a server that answers to another name, with that name as :authority.
    VerifyPolicy other = policy;
    other.authorities = {"other.example:9000"};
    SignedGrpcCall changed = call;
    changed.authority = "other.example:9000";
    CHECK(Refusal(VerifyGrpcCall(changed, other, kCreated)) == kDoesNotVerify);
    VerifyPolicy lenient = other;
    lenient.check_authority = false;
    // Still covered, so still checked; a signature without it passes only with the policy off.
    CHECK(Refusal(VerifyGrpcCall(changed, lenient, kCreated)) == kDoesNotVerify);
    SignedGrpcCall without = Signed(Call(), EdSigner(), kCreated, /*cover_authority=*/false);
    without.authority = "proxy.internal:80";
    CHECK(VerifyGrpcCall(without, lenient, kCreated).ok());
    CHECK(Refusal(VerifyGrpcCall(without, policy, kCreated)) == "@authority is not covered");
  }
  SECTION("a covered dtm-* key taken away, an uncovered one added") {
    SignedGrpcCall xa = Call();
    xa.metadata.emplace_back("dtm-phase2_url", "bank.example:9000/bank.Bank/Xa");
    SignedGrpcCall missing = Signed(xa, EdSigner());
    Remove(missing.metadata, "dtm-phase2_url");
    CHECK(Refusal(VerifyGrpcCall(missing, policy, kCreated)) ==
          "dtm-phase2_url is covered but the call carries no dtm-phase2_url");
    SignedGrpcCall no_op = call;
    Remove(no_op.metadata, "dtm-op");
    CHECK(Refusal(VerifyGrpcCall(no_op, policy, kCreated)) ==
          "dtm-op is covered but the call carries no dtm-op");
    SignedGrpcCall added = call;
    added.metadata.emplace_back("dtm-phase2_url", "evil.example:9000/bank.Bank/Xa");
    CHECK(Refusal(VerifyGrpcCall(added, policy, kCreated)) == "dtm-phase2_url is not covered");
  }
}

TEST_CASE("every component Settle requires of a gRPC call must be covered, and nothing else",
          "[signing][grpc]") {
  const VerifyPolicy policy = Policy({EdVerifier()});
  const SignedGrpcCall call = Call();
  const std::string digest = ContentDigestSha256(call.message);
  // A signature made by hand over `components`, with their values as Settle derives them.
  auto sign = [&](std::vector<std::string> components) {
    SignatureParams params{.components = std::move(components),
                           .created = kCreated,
                           .keyid = EdSigner().keyid(),
                           .alg = "ed25519"};
    std::vector<Component> covered;
    for (const std::string& name : params.components) {
      std::string value;
      if (name == "@method") value = "POST";
      if (name == "@authority") value = call.authority;
      if (name == "@path") value = call.method;
      if (name == "content-digest") value = digest;
      for (const auto& [k, v] : call.metadata) {
        if (k == name) value = v;
      }
      covered.push_back({name, value});
    }
    auto base = SignatureBase(covered, params);
    REQUIRE(base);
    auto signature = EdSigner().Sign(*base);
    REQUIRE(signature);
    SignedGrpcCall out = call;
    out.metadata.emplace_back("content-digest", digest);
    out.metadata.emplace_back("signature-input", "settle=" + SerializeParams(params));
    out.metadata.emplace_back("signature", "settle=" + ByteSequence(*signature));
    return out;
  };
  const std::vector<std::string> all = {"@method", "@authority",     "@path",
                                        "dtm-gid", "dtm-trans_type", "dtm-branch_id",
                                        "dtm-op",  "dtm-dtm",        "content-digest"};
  CHECK(VerifyGrpcCall(sign(all), policy, kCreated).ok());
  for (const std::string& left_out : all) {
    INFO(left_out);
    std::vector<std::string> fewer = all;
    std::erase(fewer, left_out);
    CHECK(Refusal(VerifyGrpcCall(sign(fewer), policy, kCreated)) == left_out + " is not covered");
  }
  std::vector<std::string> more = all;
  more.insert(more.end() - 1, "x-trace-id");
  CHECK(Refusal(VerifyGrpcCall(sign(more), policy, kCreated)) ==
        "component \"x-trace-id\" is not one Settle signs");
  std::vector<std::string> query = all;
  query.insert(query.end() - 1, "@query");
  CHECK(Refusal(VerifyGrpcCall(sign(query), policy, kCreated)) ==
        "component \"@query\" is not one Settle signs");
}

TEST_CASE("a gRPC call signed by a key the verifier does not trust is refused", "[signing][grpc]") {
  const SigningKey stranger = Signer(kOtherEd25519Private);
  CHECK(Refusal(VerifyGrpcCall(Signed(Call(), stranger), Policy({EdVerifier()}), kCreated)) ==
        "unknown keyid \"" + stranger.keyid() + "\"");
  // Another key's signature under a trusted keyid.
  SignedGrpcCall call = Signed(Call(), EdSigner());
  const SignedGrpcCall other = Signed(Call(), stranger);
  Set(call.metadata, "signature", Get(other.metadata, "signature"));
  CHECK(Refusal(VerifyGrpcCall(call, Policy({EdVerifier()}), kCreated)) == kDoesNotVerify);
}

TEST_CASE("while a key is rotated, a gRPC call signed by either trusted key verifies",
          "[signing][grpc]") {
  const SigningKey old_key = EdSigner();
  const SigningKey new_key = Signer(kOtherEd25519Private);
  const VerifyPolicy both = Policy({EdVerifier(), Verifier(kOtherEd25519Private)});
  CHECK(VerifyGrpcCall(Signed(Call(), old_key), both, kCreated).ok());
  CHECK(VerifyGrpcCall(Signed(Call(), new_key), both, kCreated).ok());
  // Once the old key is dropped, only the new one verifies.
  const VerifyPolicy rotated = Policy({Verifier(kOtherEd25519Private)});
  CHECK(VerifyGrpcCall(Signed(Call(), new_key), rotated, kCreated).ok());
  CHECK(Refusal(VerifyGrpcCall(Signed(Call(), old_key), rotated, kCreated)) ==
        "unknown keyid \"ed25519-b16c2d1bead12626\"");
}

TEST_CASE("a gRPC call's created may lie at the window's edge, not a second past it",
          "[signing][grpc]") {
  VerifyPolicy policy = Policy({HmacVerifier()});
  const SignedGrpcCall call = Signed(Call(), HmacSigner());
  CHECK(VerifyGrpcCall(call, policy, kCreated + 300).ok());
  CHECK(VerifyGrpcCall(call, policy, kCreated - 300).ok());
  CHECK(Refusal(VerifyGrpcCall(call, policy, kCreated + 301)) ==
        "created 301 s before now, outside the 300 s window");
  CHECK(Refusal(VerifyGrpcCall(call, policy, kCreated - 301)) ==
        "created 301 s after now, outside the 300 s window");
  policy.window = std::chrono::seconds(5);
  CHECK(VerifyGrpcCall(call, policy, kCreated + 5).ok());
  CHECK(Refusal(VerifyGrpcCall(call, policy, kCreated + 6)) ==
        "created 6 s before now, outside the 5 s window");
}

TEST_CASE("a dtm-* value that would forge a line of the base is not signed", "[signing][grpc]") {
  SignedGrpcCall call = Call();
  Set(call.metadata, "dtm-gid", "g1\n\"dtm-op\": confirm");
  auto added = SignGrpcCall(call, EdSigner(), kCreated);
  REQUIRE_FALSE(added);
  CHECK(Refusal(added.status()) == "the value of \"dtm-gid\" holds a control character");
}

TEST_CASE("each refusal of a gRPC call says its kind", "[signing][grpc][kind]") {
  const VerifyPolicy policy = Policy({EdVerifier()});
  const SignedGrpcCall call = Signed(Call(), EdSigner());
  auto kind = [&](const SignedGrpcCall& arrived) {
    return Kind(VerifyGrpcCall(arrived, policy, kCreated));
  };
  // `call` with its signature-input's text edited: `from` replaced by `to`.
  auto edited = [&](std::string_view from, std::string_view to) {
    SignedGrpcCall out = call;
    std::string input = Get(out.metadata, "signature-input");
    const std::size_t at = input.find(from);
    REQUIRE(at != std::string::npos);
    input.replace(at, from.size(), to);
    Set(out.metadata, "signature-input", input);
    return out;
  };

  CHECK(kind(Call()) == "unsigned");

  SignedGrpcCall input_alone = call;
  Remove(input_alone.metadata, "signature");
  CHECK(kind(input_alone) == "malformed");
  SignedGrpcCall signature_alone = call;
  Remove(signature_alone.metadata, "signature-input");
  CHECK(kind(signature_alone) == "malformed");
  CHECK(kind(edited("settle=(", "settle=((")) == "malformed");
  CHECK(kind(edited("\"content-digest\"", "\"x-trace-id\" \"content-digest\"")) == "malformed");

  CHECK(kind(edited("\"dtm-op\" ", "")) == "not_covered");
  SignedGrpcCall no_op = call;
  Remove(no_op.metadata, "dtm-op");
  CHECK(kind(no_op) == "not_covered");
  SignedGrpcCall no_digest = call;
  Remove(no_digest.metadata, "content-digest");
  CHECK(kind(no_digest) == "not_covered");

  CHECK(Kind(VerifyGrpcCall(call, Policy({HmacVerifier()}), kCreated)) == "unknown_key");
  CHECK(kind(edited("alg=\"ed25519\"", "alg=\"hmac-sha256\"")) == "wrong_algorithm");
  CHECK(Kind(VerifyGrpcCall(call, policy, kCreated + 301)) == "outside_window");
  CHECK(Kind(VerifyGrpcCall(call, policy, kCreated - 301)) == "outside_window");

  SignedGrpcCall message = call;
  message.message = std::string("\x08\xe8\x07\x12\x01\x31", 6);
  CHECK(kind(message) == "digest_mismatch");
  SignedGrpcCall gid = call;
  Set(gid.metadata, "dtm-gid", "forged-1");
  CHECK(kind(gid) == "bad_signature");
}

TEST_CASE("a gRPC call must be signed for an authority the server answers to",
          "[signing][grpc][kind][authority]") {
  const SignedGrpcCall signed_call = Signed(Call(), EdSigner());  // for bank.example:9000
  // Behind a proxy that rewrote :authority, the server's own name is what counts.
  SignedGrpcCall proxied = signed_call;
  proxied.authority = "10.0.0.7:9000";
  CHECK(VerifyGrpcCall(proxied, Policy({EdVerifier()}), kCreated).ok());

  // Replayed to another server that trusts the key: refused, naming the authority signed.
  VerifyPolicy other = Policy({EdVerifier()});
  other.authorities = {"other-bank.example:9001"};
  const Verdict kept = VerifyGrpcCall(signed_call, other, kCreated);
  CHECK(Kind(kept) == "authority_mismatch");
  CHECK(Refusal(kept) ==
        "signed for authority \"bank.example:9000\" (the call's Host), which is not one this "
        "participant answers to (\"other-bank.example:9001\")");
  SignedGrpcCall moved = signed_call;
  moved.authority = "other-bank.example:9001";
  CHECK(Kind(VerifyGrpcCall(moved, other, kCreated)) == "bad_signature");
  moved.metadata.emplace_back("x-forwarded-host", "bank.example:9000");
  CHECK(Kind(VerifyGrpcCall(moved, other, kCreated)) == "authority_mismatch");

  SignedGrpcCall tampered = signed_call;
  Set(tampered.metadata, "dtm-op", "compensate");
  CHECK(Kind(VerifyGrpcCall(tampered, other, kCreated)) == "bad_signature");
}

TEST_CASE("a gRPC countersignature of a Try passes only where a countersigned Try is asked for",
          "[signing][grpc][tag]") {
  SignedGrpcCall try_call = Call();
  Set(try_call.metadata, "dtm-op", "try");
  Set(try_call.metadata, "dtm-trans_type", "tcc");
  Remove(try_call.metadata, "dtm-dtm");
  auto added = SignGrpcCall(try_call, EdSigner(), kCreated, true, kRegisteredTryTag);
  REQUIRE(added);
  SignedGrpcCall tagged = try_call;
  tagged.metadata.insert(tagged.metadata.end(), added->begin(), added->end());
  VerifyPolicy for_try = Policy({EdVerifier()});
  for_try.tags = {std::string(kRegisteredTryTag)};
  CHECK(VerifyGrpcCall(tagged, for_try, kCreated).ok());
  CHECK(Kind(VerifyGrpcCall(tagged, Policy({EdVerifier()}), kCreated)) == "malformed");
  CHECK(Kind(VerifyGrpcCall(Signed(try_call, EdSigner()), for_try, kCreated)) == "malformed");
  // A dtm-dtm added beside the covered words is not covered.
  SignedGrpcCall with_dtm = tagged;
  with_dtm.metadata.emplace_back("dtm-dtm", "127.0.0.1:36790");
  CHECK(Refusal(VerifyGrpcCall(with_dtm, for_try, kCreated)) == "dtm-dtm is not covered");
}

}  // namespace
}  // namespace settle::signing
