#pragma once

// What the signing tests do to a request's fields (HTTP) or a call's metadata (gRPC), both
// lists of name and value: read one, change one as a forger would, take one away; and what
// they check of a refusal.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/status.h"
#include "settle/signing/refusal_kind.h"
#include "settle/signing/verdict.h"

namespace settle::signing::testing {

using Fields = std::vector<std::pair<std::string, std::string>>;

inline std::string Get(const Fields& fields, std::string_view name) {
  for (const auto& [n, v] : fields) {
    if (n == name) return v;
  }
  FAIL("no field " << name);
  return "";
}

// Replaces the first field of that name, or adds one.
inline void Set(Fields& fields, std::string_view name, std::string value) {
  for (auto& [n, v] : fields) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  fields.emplace_back(std::string(name), std::move(value));
}

inline void Remove(Fields& fields, std::string_view name) {
  std::erase_if(fields, [&](const auto& field) { return field.first == name; });
}

// The reason of a refusal, checked to be one: InvalidArgument, without a verdict's words.
inline std::string Refusal(const Status& status) {
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == StatusCode::kInvalidArgument);
  for (std::string_view word : {"FAILURE", "ONGOING", "SUCCESS"}) {
    CHECK(status.message().find(word) == std::string::npos);
  }
  return status.message();
}
inline std::string Refusal(const Verdict& verdict) { return Refusal(verdict.status()); }

// The name of a refusal's kind, checked to be one.
inline std::string Kind(const Verdict& verdict) {
  REQUIRE_FALSE(verdict.ok());
  return std::string(RefusalKindName(verdict.kind()));
}

}  // namespace settle::signing::testing
