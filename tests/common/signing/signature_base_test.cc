#include "settle/signing/signature_base.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace settle::signing {
namespace {

SignatureParams Params(std::vector<std::string> components) {
  return SignatureParams{
      .components = std::move(components), .created = 1700000000, .keyid = "k1", .alg = "ed25519"};
}

TEST_CASE("parameters are serialized as an inner list, created, keyid, then alg",
          "[signing][base]") {
  CHECK(SerializeParams(Params({"@method", "@path"})) ==
        "(\"@method\" \"@path\");created=1700000000;keyid=\"k1\";alg=\"ed25519\"");
  SignatureParams no_alg = Params({"content-digest"});
  no_alg.alg.clear();
  CHECK(SerializeParams(no_alg) == "(\"content-digest\");created=1700000000;keyid=\"k1\"");
  SignatureParams none = Params({});
  none.keyid = "a\"b\\c";
  CHECK(SerializeParams(none) == "();created=1700000000;keyid=\"a\\\"b\\\\c\";alg=\"ed25519\"");
}

TEST_CASE("the signature base is one line per component and the parameters last",
          "[signing][base]") {
  const SignatureParams params = Params({"@method", "@query", "x-empty"});
  auto base = SignatureBase({{"@method", "POST"}, {"@query", "?a=1&b=2"}, {"x-empty", ""}}, params);
  REQUIRE(base);
  CHECK(*base ==
        "\"@method\": POST\n"
        "\"@query\": ?a=1&b=2\n"
        "\"x-empty\": \n"
        "\"@signature-params\": (\"@method\" \"@query\" \"x-empty\");created=1700000000;"
        "keyid=\"k1\";alg=\"ed25519\"");

  auto nothing = SignatureBase({}, Params({}));
  REQUIRE(nothing);
  CHECK(*nothing == "\"@signature-params\": ();created=1700000000;keyid=\"k1\";alg=\"ed25519\"");

  // Bytes beyond ASCII are not control characters (HTTP's obs-text).
  auto utf8 = SignatureBase({{"@path", "/caf\xc3\xa9"}}, Params({"@path"}));
  REQUIRE(utf8);
  CHECK(utf8->starts_with("\"@path\": /caf\xc3\xa9\n"));
}

TEST_CASE("a value with a control character could forge a line and is refused", "[signing][base]") {
  for (std::string bad : {std::string("a\nb"), std::string("a\r"), std::string("\tx"),
                          std::string("a\x01"), std::string("a\x7f"), std::string("a\0b", 3)}) {
    auto base = SignatureBase({{"@path", bad}}, Params({"@path"}));
    REQUIRE_FALSE(base);
    CHECK(base.status().code() == StatusCode::kInvalidArgument);
    CHECK(base.status().message() == "the value of \"@path\" holds a control character");
  }
}

TEST_CASE("the covered components must be the parameters' list, each once", "[signing][base]") {
  auto wrong_order =
      SignatureBase({{"@path", "/"}, {"@method", "GET"}}, Params({"@method", "@path"}));
  REQUIRE_FALSE(wrong_order);
  CHECK_THAT(wrong_order.status().message(), Catch::Contains("is not the signature's component"));

  auto too_few = SignatureBase({{"@method", "GET"}}, Params({"@method", "@path"}));
  REQUIRE_FALSE(too_few);
  CHECK_THAT(too_few.status().message(), Catch::Contains("1 values for 2 components"));

  auto twice =
      SignatureBase({{"@method", "GET"}, {"@method", "GET"}}, Params({"@method", "@method"}));
  REQUIRE_FALSE(twice);
  CHECK(twice.status().message() == "component \"@method\" is listed twice");

  auto params_covered = SignatureBase({{"@signature-params", "x"}}, Params({"@signature-params"}));
  REQUIRE_FALSE(params_covered);
  CHECK_THAT(params_covered.status().message(), Catch::Contains("cannot be a covered component"));

  for (std::string name : {"Content-Digest", "@Method", "", "@", "a b", "x\"y"}) {
    auto base = SignatureBase({{name, "v"}}, Params({name}));
    REQUIRE_FALSE(base);
    CHECK_THAT(base.status().message(),
               Catch::Contains("neither a lowercase field name nor a derived component"));
  }

  SignatureParams bad_keyid = Params({});
  bad_keyid.keyid = "k\n1";
  CHECK_FALSE(SignatureBase({}, bad_keyid));
  SignatureParams huge = Params({});
  huge.created = 1'000'000'000'000'000;
  CHECK_FALSE(SignatureBase({}, huge));
}

TEST_CASE("Signature-Input is read as one dictionary member", "[signing][parse]") {
  auto parsed = ParseSignatureInput(
      "settle=(\"@method\" \"@authority\" \"@path\" \"@query\" \"content-digest\")"
      ";created=1700000000;keyid=\"ed25519-0123456789abcdef\";alg=\"ed25519\"");
  REQUIRE(parsed);
  CHECK(parsed->label == "settle");
  CHECK(parsed->params.components ==
        std::vector<std::string>{"@method", "@authority", "@path", "@query", "content-digest"});
  CHECK(parsed->params.created == 1700000000);
  CHECK(parsed->params.keyid == "ed25519-0123456789abcdef");
  CHECK(parsed->params.alg == "ed25519");

  // What RFC 8941 allows around the syntax: leading SP, several SP in the inner list, SP after
  // ';', trailing OWS; an escaped quote and backslash in a string; a negative integer.
  auto spaced = ParseSignatureInput(
      "  sig*1.a_b-c=(  \"@method\"   \"x-a\" );  created=-5; keyid=\"a\\\"b\\\\c\" \t");
  REQUIRE(spaced);
  CHECK(spaced->label == "sig*1.a_b-c");
  CHECK(spaced->params.components == std::vector<std::string>{"@method", "x-a"});
  CHECK(spaced->params.created == -5);
  CHECK(spaced->params.keyid == "a\"b\\c");
  CHECK(spaced->params.alg.empty());

  auto empty_list = ParseSignatureInput("*=();created=0;keyid=\"\"");
  REQUIRE(empty_list);
  CHECK(empty_list->params.components.empty());
  CHECK(empty_list->params.tag.empty());

  // A tag (RFC 9421 §2.3) comes last, and is serialized back the same.
  const std::string tagged_field =
      "settle=(\"@method\");created=1;keyid=\"k\";alg=\"ed25519\";tag=\"settle-try\"";
  auto tagged = ParseSignatureInput(tagged_field);
  REQUIRE(tagged);
  CHECK(tagged->params.tag == "settle-try");
  CHECK("settle=" + SerializeParams(tagged->params) == tagged_field);
}

TEST_CASE("a malformed Signature-Input is refused with what is wrong", "[signing][parse]") {
  const std::string list = "(\"@method\" \"@path\")";
  const struct {
    std::string field;
    std::string reason;
  } cases[] = {
      {"", "the field is empty"},
      {"   ", "the field is empty"},
      {"settle", "is not an inner list"},
      {"settle=", "expected an item"},
      {"settle=\"x\"", "is not an inner list"},
      {"Settle=" + list + ";created=1;keyid=\"k\"", "expected a key"},
      {"1settle=" + list + ";created=1;keyid=\"k\"", "expected a key"},
      {"settle =" + list + ";created=1;keyid=\"k\"", "expected ',' or the end of the field"},
      {"settle= " + list + ";created=1;keyid=\"k\"", "expected an item"},
      {"settle=(\"@method\"", "expected ')' to close the inner list"},
      {"settle=(\"@method\"\"@path\");created=1;keyid=\"k\"", "expected a space or ')'"},
      {"settle=(\"@method\"\t\"@path\");created=1;keyid=\"k\"", "expected a space or ')'"},
      {"settle=(@method);created=1;keyid=\"k\"", "expected an item"},
      {"settle=(method);created=1;keyid=\"k\"", "is a token, not a string"},
      {"settle=(\"@method\" \"@method\");created=1;keyid=\"k\"", "is listed twice"},
      {"settle=(\"@Method\");created=1;keyid=\"k\"", "neither a lowercase field name"},
      {"settle=(\"Content-Digest\");created=1;keyid=\"k\"", "neither a lowercase field name"},
      {"settle=(\"@signature-params\");created=1;keyid=\"k\"", "cannot be a covered component"},
      {"settle=(\"@query-param\";name=\"a\");created=1;keyid=\"k\"",
       "component parameters are not supported"},
      {"settle=(\"content-digest\";sf);created=1;keyid=\"k\"",
       "component parameters are not supported"},
      {"settle=" + list + ";created=1;keyid=\"k\", other=" + list + ";created=1;keyid=\"k\"",
       "several members"},
      {"settle=" + list + ";created=1;keyid=\"k\",", "several members"},
      {"settle=" + list + ";created=1;keyid=\"k\" x", "expected ',' or the end of the field"},
      {"settle=" + list + ";created=1;keyid=\"k\";expires=2", "\"expires\" is not supported"},
      {"settle=" + list + ";created=1;keyid=\"k\";nonce=\"n\"", "\"nonce\" is not supported"},
      {"settle=" + list + ";created=1;keyid=\"k\";label=\"t\"", "\"label\" is not supported"},
      {"settle=" + list + ";created=1;tag=\"t\";keyid=\"k\"", "\"keyid\" is out of order"},
      {"settle=" + list + ";created=1;keyid=\"k\";tag=\"t\";alg=\"x\"", "\"alg\" is out of order"},
      {"settle=" + list + ";created=1;keyid=\"k\";tag=\"\"", "\"tag\" is empty"},
      {"settle=" + list + ";created=1;keyid=\"k\";tag=t", "\"tag\" is a token"},
      {"settle=" + list + ";keyid=\"k\";created=1", "\"created\" is out of order"},
      {"settle=" + list + ";alg=\"ed25519\";created=1;keyid=\"k\"", "out of order"},
      {"settle=" + list + ";created=1;created=2;keyid=\"k\"", "\"created\" is given twice"},
      {"settle=" + list + ";created=\"1\";keyid=\"k\"", "\"created\" is a string, not an integer"},
      {"settle=" + list + ";created=1.5;keyid=\"k\"", "a decimal is not expected"},
      {"settle=" + list + ";created=1234567890123456;keyid=\"k\"", "at most 15 digits"},
      {"settle=" + list + ";created=-;keyid=\"k\"", "expected a digit"},
      {"settle=" + list + ";created;keyid=\"k\"", "\"created\" is a boolean, not an integer"},
      {"settle=" + list + ";created=1;keyid=k", "\"keyid\" is a token, not a string"},
      {"settle=" + list + ";created=1;keyid=\"k\";alg=ed25519", "\"alg\" is a token"},
      {"settle=" + list + ";created=1;keyid=\"k\";alg=\"\"", "\"alg\" is empty"},
      {"settle=" + list + ";created = 1;keyid=\"k\"", "expected ',' or the end of the field"},
      {"settle=" + list + ";created= 1;keyid=\"k\"", "expected an item"},
      {"settle=" + list + " ;created=1;keyid=\"k\"", "expected ',' or the end of the field"},
      {"settle=" + list + ";keyid=\"k\"", "\"created\" is missing"},
      {"settle=" + list + ";created=1", "\"keyid\" is missing"},
      {"settle=" + list + ";created=1;keyid=\"a\\b\"", "may escape only"},
      {"settle=" + list + ";created=1;keyid=\"k", "expected '\"' to close the string"},
      {"settle=" + list + ";created=1;keyid=\"caf\xc3\xa9\"", "only printable ASCII"},
      {"settle=" + list + ";created=1;keyid=\"a\tb\"", "only printable ASCII"},
      {"settle=" + list + ";created=1;keyid=\"k\";Alg=\"x\"", "expected a key"},
      {"settle=" + list + ";created=?2;keyid=\"k\"", "expected '0' or '1'"},
      {"settle=" + list + ";created=@1;keyid=\"k\"", "expected an item"},
  };
  for (const auto& c : cases) {
    INFO("field: " << c.field);
    auto parsed = ParseSignatureInput(c.field);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(parsed.status().message(), Catch::Contains(c.reason));
  }
}

TEST_CASE("Signature's member is read as a byte sequence", "[signing][parse]") {
  auto bytes = ParseSignature("settle=:AAEC/w==:", "settle");
  REQUIRE(bytes);
  CHECK(*bytes == std::string("\x00\x01\x02\xff", 4));
  // RFC 8941 §4.2.7: missing padding is tolerated.
  auto unpadded = ParseSignature(" settle=:AAEC/w:  ", "settle");
  REQUIRE(unpadded);
  CHECK(*unpadded == *bytes);
  auto empty = ParseSignature("settle=::", "settle");
  REQUIRE(empty);
  CHECK(empty->empty());

  const struct {
    std::string field;
    std::string reason;
  } cases[] = {
      {"settle=:not base64!:", "holds only base64"},
      {"settle=:AAEC/w=:", "not valid base64"},
      {"settle=:A:", "not valid base64"},
      {"settle=:AA=C:", "not valid base64"},
      {"settle=:AAEC", "expected ':' to close"},
      {"settle=AAEC", "is not a byte sequence"},
      {"settle=(:AAEC:)", "is not a byte sequence"},
      {"settle", "is not a byte sequence"},
      {"settle=:AAEC:;x=1", "has parameters"},
      {"other=:AAEC:", "there is no member \"settle\""},
      {"settle=:AAEC:, other=:AAEC:", "several members"},
      {"other=:AAEC:, settle=:AAEC:", "several members"},
      {"", "the field is empty"},
  };
  for (const auto& c : cases) {
    INFO("field: " << c.field);
    auto parsed = ParseSignature(c.field, "settle");
    REQUIRE_FALSE(parsed);
    CHECK_THAT(parsed.status().message(), Catch::Contains(c.reason));
  }
}

TEST_CASE("ByteSequence writes RFC 4648 base64 between colons", "[signing][parse]") {
  // RFC 4648 §10's test vectors.
  CHECK(ByteSequence("") == "::");
  CHECK(ByteSequence("f") == ":Zg==:");
  CHECK(ByteSequence("fo") == ":Zm8=:");
  CHECK(ByteSequence("foo") == ":Zm9v:");
  CHECK(ByteSequence("foob") == ":Zm9vYg==:");
  CHECK(ByteSequence("fooba") == ":Zm9vYmE=:");
  CHECK(ByteSequence("foobar") == ":Zm9vYmFy:");
  for (std::string bytes :
       {std::string("f"), std::string("foobar"), std::string("\xff\xfe\0", 3)}) {
    auto back = ParseSignature("s=" + ByteSequence(bytes), "s");
    REQUIRE(back);
    CHECK(*back == bytes);
  }
}

}  // namespace
}  // namespace settle::signing
