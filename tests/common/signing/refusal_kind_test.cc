#include "settle/signing/refusal_kind.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

namespace settle::signing {
namespace {

TEST_CASE("every refusal kind has a stable lowercase name, each its own", "[signing][kind]") {
  CHECK(RefusalKindName(RefusalKind::kUnsigned) == "unsigned");
  CHECK(RefusalKindName(RefusalKind::kMalformed) == "malformed");
  CHECK(RefusalKindName(RefusalKind::kNotCovered) == "not_covered");
  CHECK(RefusalKindName(RefusalKind::kUnknownKey) == "unknown_key");
  CHECK(RefusalKindName(RefusalKind::kWrongAlgorithm) == "wrong_algorithm");
  CHECK(RefusalKindName(RefusalKind::kOutsideWindow) == "outside_window");
  CHECK(RefusalKindName(RefusalKind::kDigestMismatch) == "digest_mismatch");
  CHECK(RefusalKindName(RefusalKind::kBadSignature) == "bad_signature");
  CHECK(RefusalKindName(RefusalKind::kAuthorityMismatch) == "authority_mismatch");

  std::set<std::string> names;
  for (RefusalKind kind : kRefusalKinds) {
    const std::string name(RefusalKindName(kind));
    INFO(name);
    // A Prometheus label value and a log word: lowercase letters and underscores.
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos);
    names.insert(name);
  }
  CHECK(names.size() == kRefusalKinds.size());
}

}  // namespace
}  // namespace settle::signing
