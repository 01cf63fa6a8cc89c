#include "json_fields.h"

#include <algorithm>
#include <cmath>

namespace settle::api {
namespace {

// The deepest nesting of arrays and objects, counted outside strings.
std::size_t NestingDepth(std::string_view text, std::size_t stop_above) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > stop_above) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Result<nlohmann::json> ParseJsonText(std::string_view text, std::size_t max_depth,
                                     std::string_view field) {
  const std::string name(field);
  if (NestingDepth(text, max_depth) > max_depth) {
    return Status::InvalidArgument(name + ": nested deeper than " + std::to_string(max_depth) +
                                   " levels");
  }
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return Status::InvalidArgument(name + ": malformed JSON at byte " + std::to_string(e.byte));
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(name + ": malformed JSON: " + e.what());
  }
  return parsed;
}

Result<nlohmann::json> ParseJsonObject(std::string_view body, std::size_t max_depth) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("body: empty; expected a JSON object");
  }
  auto parsed = ParseJsonText(body, max_depth, "body");
  if (!parsed) return parsed.status();
  if (!parsed->is_object()) return Status::InvalidArgument("body: must be a JSON object");
  return parsed;
}

bool JsonFields::Has(const char* name) const { return Member(name) != nullptr; }

const nlohmann::json* JsonFields::Member(const char* name) const {
  looked_up_.emplace_back(name);
  auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::vector<std::string> JsonFields::Unread() const {
  std::vector<std::string> unread;
  for (const auto& [name, value] : object_.items()) {
    if (value.is_null()) continue;
    if (std::find(looked_up_.begin(), looked_up_.end(), name) != looked_up_.end()) continue;
    unread.push_back(prefix_ + name);
  }
  return unread;
}

Status JsonFields::ReadString(const char* name, std::optional<std::string>& out) const {
  const nlohmann::json* v = Member(name);
  if (v == nullptr) return Status::Ok();
  if (!v->is_string()) return Status::InvalidArgument(PathOf(name) + ": must be a string");
  out = v->get<std::string>();
  return Status::Ok();
}

Status JsonFields::RequireString(const char* name, std::string& out) const {
  std::optional<std::string> value;
  if (Status s = ReadString(name, value); !s.ok()) return s;
  if (!value) return Status::InvalidArgument(PathOf(name) + ": required");
  if (value->empty()) return Status::InvalidArgument(PathOf(name) + ": empty");
  out = std::move(*value);
  return Status::Ok();
}

Status JsonFields::ReadBool(const char* name, std::optional<bool>& out) const {
  const nlohmann::json* v = Member(name);
  if (v == nullptr) return Status::Ok();
  if (!v->is_boolean()) return Status::InvalidArgument(PathOf(name) + ": must be true or false");
  out = v->get<bool>();
  return Status::Ok();
}

Status JsonFields::ReadCount(const char* name, std::int64_t max, std::optional<std::int64_t>& out,
                             std::string_view unit) const {
  const nlohmann::json* v = Member(name);
  if (v == nullptr) return Status::Ok();
  const std::string of_unit = unit.empty() ? "" : " of " + std::string(unit);
  const std::string range =
      PathOf(name) + ": must be a whole number" + of_unit + " from 0 to " + std::to_string(max);
  if (v->is_number_unsigned()) {
    const auto n = v->get<std::uint64_t>();
    if (n > static_cast<std::uint64_t>(max)) return Status::InvalidArgument(range);
    out = static_cast<std::int64_t>(n);
    return Status::Ok();
  }
  if (v->is_number_integer()) {
    const auto n = v->get<std::int64_t>();
    if (n < 0 || n > max) return Status::InvalidArgument(range);
    out = n;
    return Status::Ok();
  }
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < 0 || d > static_cast<double>(max) || d != std::floor(d)) {
      return Status::InvalidArgument(range);
    }
    out = static_cast<std::int64_t>(d);
    return Status::Ok();
  }
  return Status::InvalidArgument(range);
}

Status JsonFields::ReadStringMap(const char* name,
                                 std::optional<std::map<std::string, std::string>>& out) const {
  const nlohmann::json* v = Member(name);
  if (v == nullptr) return Status::Ok();
  if (!v->is_object()) return Status::InvalidArgument(PathOf(name) + ": must be an object");
  std::map<std::string, std::string> values;
  for (const auto& [key, value] : v->items()) {
    if (!value.is_string()) {
      return Status::InvalidArgument(PathOf(name) + "." + key + ": must be a string");
    }
    values.emplace(key, value.get<std::string>());
  }
  out = std::move(values);
  return Status::Ok();
}

}  // namespace settle::api
