#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "settle/core/status.h"

namespace settle::api {

// Parses a request body that must be one JSON object, refusing nesting deeper than
// `max_depth` before the parser sees it (hostile bodies must not exhaust the stack).
Result<nlohmann::json> ParseJsonObject(std::string_view body, std::size_t max_depth);
// Any JSON value, with the same depth guard; errors name `field` ("steps: malformed JSON at
// byte 7").
Result<nlohmann::json> ParseJsonText(std::string_view text, std::size_t max_depth,
                                     std::string_view field);

// Typed, null-tolerant reads of an object's members. Each Read* leaves `out` untouched and
// returns OK when the member is absent or null; a member of the wrong type is an
// InvalidArgument naming `path` (the member's name, prefixed for nested objects). It remembers
// which members were looked up, so that the caller can name the ones nothing read (Unread).
//
// A view: `object` must outlive it. One thread at a time (it records its lookups).
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string prefix = "")
      : object_(object), prefix_(std::move(prefix)) {}

  bool Has(const char* name) const;
  std::string PathOf(const char* name) const { return prefix_ + name; }

  Status ReadString(const char* name, std::optional<std::string>& out) const;
  Status ReadBool(const char* name, std::optional<bool>& out) const;
  // A whole number in [0, max]; a float with an integral value counts.
  // `unit`, when given, is named in the error ("a whole number of seconds from 0 to 9").
  Status ReadCount(const char* name, std::int64_t max, std::optional<std::int64_t>& out,
                   std::string_view unit = "") const;
  // An object whose every member is a string.
  Status ReadStringMap(const char* name,
                       std::optional<std::map<std::string, std::string>>& out) const;

  // Like ReadString, but absent or null is "<name>: required" and "" is "<name>: empty".
  Status RequireString(const char* name, std::string& out) const;

  const nlohmann::json* Member(const char* name) const;  // nullptr when absent or null

  // The paths of the members no call above looked up, by name (the order the parsed object
  // keeps); null members count as absent and are left out.
  std::vector<std::string> Unread() const;

 private:
  const nlohmann::json& object_;
  std::string prefix_;
  mutable std::vector<std::string> looked_up_;
};

}  // namespace settle::api
