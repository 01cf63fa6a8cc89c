#include "settle/signing/refusal_kind.h"

namespace settle::signing {

std::string_view RefusalKindName(RefusalKind kind) {
  switch (kind) {
    case RefusalKind::kUnsigned:
      return "unsigned";
    case RefusalKind::kMalformed:
      return "malformed";
    case RefusalKind::kNotCovered:
      return "not_covered";
    case RefusalKind::kUnknownKey:
      return "unknown_key";
    case RefusalKind::kWrongAlgorithm:
      return "wrong_algorithm";
    case RefusalKind::kOutsideWindow:
      return "outside_window";
    case RefusalKind::kDigestMismatch:
      return "digest_mismatch";
    case RefusalKind::kBadSignature:
      return "bad_signature";
    case RefusalKind::kAuthorityMismatch:
      return "authority_mismatch";
  }
  return "unknown";
}

}  // namespace settle::signing
