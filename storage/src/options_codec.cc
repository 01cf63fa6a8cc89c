#include "options_codec.h"

#include <charconv>
#include <exception>
#include <limits>

#include <nlohmann/json.hpp>

namespace settle::storage {
namespace {

using nlohmann::json;

Status Corrupt(std::string_view what) {
  return Status::Internal("stored options are corrupt: " + std::string(what));
}

// The value of `key`, or null when it is absent.
const json& Field(const json& object, const char* key) {
  static const json kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

Status ReadMillis(const json& object, const char* key, Duration* out) {
  const json& v = Field(object, key);
  if (v.is_null()) return Status::Ok();
  if (!v.is_number_integer()) return Corrupt(std::string(key) + " is not an integer");
  *out = Duration(v.get<std::int64_t>());
  return Status::Ok();
}

bool ToInt(const json& v, int* out) {
  if (!v.is_number_integer()) return false;
  const std::int64_t n = v.get<std::int64_t>();
  if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max()) return false;
  *out = static_cast<int>(n);
  return true;
}

bool ParseIntKey(std::string_view s, int* out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && ptr == end && !s.empty();
}

Status ReadOrders(const json& object, std::map<int, std::vector<int>>* out) {
  const json& v = Field(object, "orders");
  if (v.is_null()) return Status::Ok();
  if (!v.is_object()) return Corrupt("orders is not an object");
  for (const auto& [key, deps] : v.items()) {
    int step = 0;
    if (!ParseIntKey(key, &step)) return Corrupt("orders key '" + key + "' is not an integer");
    if (!deps.is_array()) return Corrupt("orders[" + key + "] is not an array");
    std::vector<int>& list = (*out)[step];
    for (const json& dep : deps) {
      int n = 0;
      if (!ToInt(dep, &n)) return Corrupt("orders[" + key + "] holds a non-integer");
      list.push_back(n);
    }
  }
  return Status::Ok();
}

Status ReadHeaders(const json& object, std::map<std::string, std::string>* out) {
  const json& v = Field(object, "branch_headers");
  if (v.is_null()) return Status::Ok();
  if (!v.is_object()) return Corrupt("branch_headers is not an object");
  for (const auto& [name, value] : v.items()) {
    if (!value.is_string()) return Corrupt("branch_headers[" + name + "] is not a string");
    (*out)[name] = value.get<std::string>();
  }
  return Status::Ok();
}

Result<TransOptions> Decode(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Corrupt("not JSON");
  if (!j.is_object()) return Corrupt("not a JSON object");
  TransOptions o;
  if (Status s = ReadMillis(j, "timeout_to_fail", &o.timeout_to_fail); !s.ok()) return s;
  if (Status s = ReadMillis(j, "request_timeout", &o.request_timeout); !s.ok()) return s;
  if (Status s = ReadMillis(j, "retry_interval", &o.retry_interval); !s.ok()) return s;
  if (Status s = ReadMillis(j, "delay", &o.delay); !s.ok()) return s;
  if (const json& v = Field(j, "retry_limit"); !v.is_null() && !ToInt(v, &o.retry_limit)) {
    return Corrupt("retry_limit is not an int");
  }
  if (const json& v = Field(j, "concurrent"); !v.is_null()) {
    if (!v.is_boolean()) return Corrupt("concurrent is not a boolean");
    o.concurrent = v.get<bool>();
  }
  if (const json& v = Field(j, "pause_after"); !v.is_null()) {
    int limit = 0;
    if (!ToInt(v, &limit) || limit < 0) return Corrupt("pause_after is not a count");
    o.pause_after = limit;
  }
  if (Status s = ReadOrders(j, &o.orders); !s.ok()) return s;
  if (Status s = ReadHeaders(j, &o.branch_headers); !s.ok()) return s;
  if (const json& v = Field(j, "custom_data"); !v.is_null()) {
    if (!v.is_string()) return Corrupt("custom_data is not a string");
    o.custom_data = v.get<std::string>();
  }
  if (const json& v = Field(j, "request_fingerprint"); !v.is_null()) {
    if (!v.is_string()) return Corrupt("request_fingerprint is not a string");
    o.request_fingerprint = v.get<std::string>();
  }
  if (const json& v = Field(j, "workflow_name"); !v.is_null()) {
    if (!v.is_string()) return Corrupt("workflow_name is not a string");
    o.workflow_name = v.get<std::string>();
  }
  return o;
}

}  // namespace

Result<std::string> EncodeOptions(const TransOptions& options) {
  try {
    json orders = json::object();
    for (const auto& [step, deps] : options.orders) orders[std::to_string(step)] = deps;
    json j = {
        {"timeout_to_fail", options.timeout_to_fail.count()},
        {"request_timeout", options.request_timeout.count()},
        {"retry_interval", options.retry_interval.count()},
        {"retry_limit", options.retry_limit},
        {"delay", options.delay.count()},
        {"concurrent", options.concurrent},
        {"orders", std::move(orders)},
        {"branch_headers", options.branch_headers},
        {"custom_data", options.custom_data},
    };
    if (!options.request_fingerprint.empty()) {
      j["request_fingerprint"] = options.request_fingerprint;
    }
    if (options.pause_after) j["pause_after"] = *options.pause_after;
    if (!options.workflow_name.empty()) j["workflow_name"] = options.workflow_name;
    return j.dump();
  } catch (const json::type_error& e) {
    // dump() refuses strings that are not valid UTF-8 (error 316).
    return Status::InvalidArgument(std::string("options: a header or custom_data is not valid "
                                               "UTF-8 (") +
                                   e.what() + ")");
  } catch (const std::exception& e) {
    return Status::Internal(std::string("encoding options: ") + e.what());
  }
}

Result<TransOptions> DecodeOptions(std::string_view json_text) {
  try {
    return Decode(json_text);
  } catch (const std::exception& e) {
    return Corrupt(e.what());
  }
}

}  // namespace settle::storage
